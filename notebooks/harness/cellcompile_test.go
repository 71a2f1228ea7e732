package harness

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestCellsCompile assembles each chapter notebook's code cells into one program, as GoNB's cell programs see
// them (every cell's declarations at the top level, each cell's `%%` body a function of its own, the missing
// standard imports added by goimports), and type-checks it with `go vet`. A library change that breaks a cell is
// found here in seconds, without Jupyter. It needs goimports (go run ./kernelsetup installs it).
func TestCellsCompile(t *testing.T) {
	for _, p := range cellPrograms(t) {
		cmd := exec.Command("go", "vet", "-unusedresult=false", p.file)
		cmd.Dir = filepath.Join("..", "..") // the repository's module
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: its cells do not compile together:\n%s", p.notebook, out)
		}
	}
}

// notebookProgram is a chapter notebook's cell program, written to a file.
type notebookProgram struct {
	notebook, file string
}

// cellPrograms writes each chapter notebook's cellProgram, formatted by goimports, to SECTION/main.go in a temporary
// folder. Without goimports it skips the test (fails it under CI).
func cellPrograms(t *testing.T) []notebookProgram {
	t.Helper()
	goimports := findGoimports()
	if goimports == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("goimports is not installed: run go run ./kernelsetup")
		}
		t.Skip("goimports is not installed (go run ./kernelsetup installs it)")
	}
	paths, err := Chapter("..")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no chapter notebook (%v)", err)
	}
	dir := t.TempDir()
	var progs []notebookProgram
	for _, path := range paths {
		nb, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var sources []string
		for _, c := range nb.CodeCells() {
			sources = append(sources, string(c.Source))
		}
		prog, err := cellProgram(sources)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		file := filepath.Join(dir, Section(path), "main.go")
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(prog), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(goimports, "-w", file).CombinedOutput(); err != nil {
			t.Fatalf("%s: goimports: %v\n%s", path, err, out)
		}
		progs = append(progs, notebookProgram{path, file})
	}
	return progs
}

// findGoimports returns the path of goimports on PATH or in Go's bin directory, or "".
func findGoimports() string {
	if p, err := exec.LookPath("goimports"); err == nil {
		return p
	}
	for _, v := range []string{"GOBIN", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if d := strings.TrimSpace(string(out)); err == nil && d != "" {
			if v == "GOPATH" {
				d = filepath.Join(strings.Split(d, string(os.PathListSeparator))[0], "bin")
			}
			if p := filepath.Join(d, "goimports"); fileExists(p) {
				return p
			}
		}
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// cellProgram is the program of a notebook's cells: the imports of all of them, every cell's declarations with
// their doc comments (what precedes `%%`, without `%` and `!` lines), and each `%%` body as a function cellN.
func cellProgram(cells []string) (string, error) {
	imports := map[string]string{} // path → name ("" when none)
	var decls, bodies []string
	for i, src := range cells {
		head, body, _ := strings.Cut(src, "%%\n")
		if strings.TrimSpace(src) == "%%" || strings.HasSuffix(src, "\n%%") {
			head, body = strings.TrimSuffix(src, "%%"), ""
		}
		var kept []string
		for _, l := range strings.Split(head, "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "%") || strings.HasPrefix(t, "!") {
				continue
			}
			kept = append(kept, l)
		}
		f, err := parser.ParseFile(token.NewFileSet(), "", "package main\n"+strings.Join(kept, "\n"), parser.ParseComments)
		if err != nil {
			return "", fmt.Errorf("code cell %d: %v", i+1, err)
		}
		src := "package main\n" + strings.Join(kept, "\n")
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
				for _, s := range g.Specs {
					spec := s.(*ast.ImportSpec)
					p, _ := strconv.Unquote(spec.Path.Value)
					if spec.Name != nil {
						imports[p] = spec.Name.Name
					} else if _, ok := imports[p]; !ok {
						imports[p] = ""
					}
				}
				continue
			}
			from := d.Pos()
			if doc := declDoc(d); doc != nil {
				from = doc.Pos()
			}
			decls = append(decls, src[from-1:d.End()-1])
		}
		if strings.TrimSpace(body) != "" {
			bodies = append(bodies, fmt.Sprintf("func cell%d() {\n%s\n}", i+1, body))
		}
	}
	paths := make([]string, 0, len(imports))
	for p := range imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%s %q\n", imports[p], p)
	}
	b.WriteString(")\n\n")
	for _, d := range append(decls, bodies...) {
		b.WriteString(d + "\n\n")
	}
	b.WriteString("func main() {}\n")
	return b.String(), nil
}

// TestCellPrograms checks the golden cell programs in the repository's testdata/cells: each chapter notebook's
// cellProgram, formatted by goimports, which agentrl's tests read to check which edits of a notebook's code change
// the keys of its stored results. With -update it writes them.
func TestCellPrograms(t *testing.T) {
	for _, p := range cellPrograms(t) {
		got, err := os.ReadFile(p.file)
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("..", "..", "testdata", "cells", Section(p.notebook)+".go")
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not %s's cell program (go test ./notebooks/harness -run TestCellPrograms -update writes it): %v\n%s",
				golden, p.notebook, err, Diff(string(want), string(got), 2, 40))
		}
	}
}

// TestExercisesShown checks that every exercise the exercises' README shows (a Go block after a line
// "<!-- testdata/exercises/NAME.cell -->") is that file's code, so the worked examples a reader copies are the ones
// TestExercisesCompile checks.
func TestExercisesShown(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "exercises", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := regexp.MustCompile("(?s)<!-- (testdata/exercises/[^ ]+\\.cell) -->\n```go\n(.*?)```\n").FindAllSubmatch(readme, -1)
	if len(shown) < 2 {
		t.Fatalf("the exercises' README shows %d exercises, want at least two worked examples", len(shown))
	}
	for _, m := range shown {
		want, err := os.ReadFile(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		if string(m[2]) != string(want) {
			t.Errorf("exercises/README.md shows another %s than the file's", m[1])
		}
	}
}

// TestExercisesCompile adds each worked example of testdata/exercises (a file SECTION-name.cell: one GoNB cell, the
// code a reader adds to a copy of notebook SECTION) to its notebook's cells and type-checks the program, as
// TestCellsCompile does the chapter's: each exercise takes a few dozen lines that use the chapter's values, not
// copies of the library's or the other cells' code.
func TestExercisesCompile(t *testing.T) {
	goimports := findGoimports()
	if goimports == "" {
		t.Skip("goimports is not installed (go run ./kernelsetup installs it)")
	}
	exercises, err := filepath.Glob(filepath.Join("testdata", "exercises", "*.cell"))
	if err != nil || len(exercises) == 0 {
		t.Fatalf("no exercise (%v)", err)
	}
	paths, err := Chapter("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exercises {
		section, _, _ := strings.Cut(filepath.Base(ex), "-")
		src, err := os.ReadFile(ex)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(src, []byte("\n")); n > 60 {
			t.Errorf("%s: %d lines, more than a few dozen", ex, n)
		}
		var sources []string
		for _, p := range paths {
			if Section(p) != section {
				continue
			}
			nb, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range nb.CodeCells() {
				sources = append(sources, string(c.Source))
			}
		}
		if len(sources) == 0 {
			t.Fatalf("%s: no notebook of section %s", ex, section)
		}
		sources = append(sources, string(src)) // one cell: declarations, then %% and its body
		prog, err := cellProgram(sources)
		if err != nil {
			t.Fatalf("%s: %v", ex, err)
		}
		file := filepath.Join(t.TempDir(), "main.go")
		if err := os.WriteFile(file, []byte(prog), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(goimports, "-w", file).CombinedOutput(); err != nil {
			t.Fatalf("%s: goimports: %v\n%s", ex, err, out)
		}
		cmd := exec.Command("go", "vet", "-unusedresult=false", file)
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: does not compile with notebook %s's cells:\n%s", ex, section, out)
		}
	}
}
