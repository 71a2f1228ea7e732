package harness

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the notebooks' copies of the library's #@save code from the library")

// libraryPath is the import path of the package whose #@save code the notebooks show.
const libraryPath = "github.com/agentrl-go/agentrl/agentrl"

// TestSavedCode checks the chapter's #@save code, whose source is the library: every function, type or method
// that a notebook cell declares under a name agentrl also declares must be the library's declaration, doc comment
// included, as savedCopy writes it for that notebook. With -update it writes those copies into the notebooks:
//
//	go test ./notebooks/harness -run TestSavedCode -update
//
// An unedited copy is also what keys a notebook's results as the library's own code (codekey.Of), so a
// notebook and a command that run the same code share what they store.
func TestSavedCode(t *testing.T) {
	lib := loadLibrary(t)
	paths, err := filepath.Glob(filepath.Join("..", "*.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, path := range paths {
		n, err := syncNotebook(path, lib, *update)
		if err != nil {
			t.Error(err)
		}
		shown += n
	}
	if len(paths) > 0 && shown == 0 {
		t.Error("no notebook shows any agentrl declaration")
	}
	t.Logf("%d saved declarations shown in %d notebooks match the library", shown, len(paths))
}

// library is agentrl's source, type-checked: its top-level declarations by declKey, and what each identifier names.
type library struct {
	fset  *token.FileSet
	pkg   *types.Package
	info  *types.Info
	src   map[*token.File][]byte
	decls map[string]ast.Decl
	docs  map[ast.Decl]*ast.CommentGroup
}

// loadLibrary parses and type-checks the files of agentrl that this build compiles, importing its dependencies from the export data
// that `go list -export` builds.
func loadLibrary(t *testing.T) *library {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", libraryPath).Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", libraryPath, err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "="); ok {
			exports[path] = file
		}
	}
	lib := &library{fset: token.NewFileSet(), src: map[*token.File][]byte{}, decls: map[string]ast.Decl{},
		docs: map[ast.Decl]*ast.CommentGroup{}}
	out, err = exec.Command("go", "list", "-f", `{{.Dir}}{{range .GoFiles}},{{.}}{{end}}`, libraryPath).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", libraryPath, err)
	}
	files := strings.Split(strings.TrimSpace(string(out)), ",") // the directory, then the files this build compiles
	var parsed []*ast.File
	for _, name := range files[1:] {
		f := filepath.Join(files[0], name)
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(lib.fset, f, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		lib.src[lib.fset.File(file.Pos())] = src
		parsed = append(parsed, file)
		for _, d := range file.Decls {
			if k := declKey(d); k != "" {
				lib.decls[k], lib.docs[d] = d, declDoc(d)
			}
		}
	}
	imp := importer.ForCompiler(lib.fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	lib.info = &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp}
	if lib.pkg, err = conf.Check(libraryPath, lib.fset, parsed, lib.info); err != nil {
		t.Fatalf("type-checking agentrl: %v", err)
	}
	return lib
}

// declDoc is a declaration's doc comment, or nil.
func declDoc(d ast.Decl) *ast.CommentGroup {
	switch d := d.(type) {
	case *ast.FuncDecl:
		return d.Doc
	case *ast.GenDecl:
		return d.Doc
	}
	return nil
}

// text returns the source of d with its doc comment.
func (l *library) text(d ast.Decl) (src []byte, start, end int) {
	from := d.Pos()
	if doc := l.docs[d]; doc != nil {
		from = doc.Pos()
	}
	file := l.fset.File(d.Pos())
	return l.src[file], file.Offset(from), file.Offset(d.End())
}

// savedCopy is the library's declaration named key as a notebook shows it: its source and doc comment, with
// "agentrl." before every use of one of the library's exported package-level names that the notebook does not
// declare itself (own), formatted by gofmt.
func (l *library) savedCopy(key string, own map[string]bool) (string, error) {
	d := l.decls[key]
	src, start, end := l.text(d)
	var at []int // offsets at which to insert the qualifier
	ast.Inspect(d, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		obj := l.info.Uses[id]
		if obj != nil && obj.Pkg() == l.pkg && obj.Parent() == l.pkg.Scope() && obj.Exported() && !own[obj.Name()] {
			at = append(at, l.fset.Position(id.Pos()).Offset)
		}
		return true
	})
	sort.Ints(at)
	var b strings.Builder
	last := start
	for _, off := range at {
		b.Write(src[last:off])
		b.WriteString("agentrl.")
		last = off
	}
	b.Write(src[last:end])
	out, err := format.Source([]byte("package main\n\n" + b.String()))
	if err != nil {
		return "", fmt.Errorf("%s: formatting the copy: %v", key, err)
	}
	return strings.TrimSuffix(strings.TrimPrefix(string(out), "package main\n\n"), "\n"), nil
}

// shownDecl is a declaration of a cell with its doc comment, as written in the cell.
type shownDecl struct {
	key, text string
}

// shownDecls returns the declarations of a GoNB cell (its cellHead), in order, or nil for a cell that is not plain
// declarations.
func shownDecls(source string) []shownDecl {
	src := cellHead(source)
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "cell.go", src, parser.ParseComments)
	if err != nil {
		return nil
	}
	var out []shownDecl
	for _, d := range file.Decls {
		k := declKey(d)
		if k == "" {
			continue
		}
		from := d.Pos()
		if doc := declDoc(d); doc != nil {
			from = doc.Pos()
		}
		out = append(out, shownDecl{k, src[fset.Position(from).Offset:fset.Position(d.End()).Offset]})
	}
	return out
}

// syncNotebook compares the copies of the library's declarations in the notebook at path with savedCopy's, and
// with write set replaces those that differ. It returns how many copies the notebook shows.
func syncNotebook(path string, lib *library, write bool) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	nb, err := decodeNotebook(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	cells := codeSources(nb)
	own := map[string]bool{} // the names the notebook declares
	for _, src := range cells {
		for _, d := range shownDecls(src) {
			own[strings.SplitN(d.key, ".", 2)[0]] = true
		}
	}
	shown, changed := 0, false
	var errs []string
	for i, src := range cells {
		for _, d := range shownDecls(src) {
			if _, ok := lib.decls[d.key]; !ok {
				continue
			}
			shown++
			want, err := lib.savedCopy(d.key, own)
			if err != nil {
				return shown, err
			}
			if d.text == want {
				continue
			}
			if !write {
				errs = append(errs, fmt.Sprintf("%s code cell %d: %s is not the library's (go test ./notebooks/harness -run TestSavedCode -update writes it):\n%s",
					path, i, d.key, Diff(want, d.text, 2, 40)))
				continue
			}
			src = strings.Replace(src, d.text, want, 1)
			changed = true
		}
		cells[i] = src
	}
	if len(errs) > 0 {
		return shown, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	if changed {
		setCodeSources(nb, cells)
		if data, err = encodeNotebook(nb); err != nil {
			return shown, err
		}
		return shown, os.WriteFile(path, data, 0o644)
	}
	return shown, nil
}

// decodeNotebook reads a notebook's JSON as generic values, numbers kept as written, so that encodeNotebook
// writes back the bytes it read (nbformat's layout: keys sorted, one-space indent, no escaping of non-ASCII or
// HTML characters).
func decodeNotebook(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var nb map[string]any
	if err := dec.Decode(&nb); err != nil {
		return nil, err
	}
	if back, err := encodeNotebook(nb); err != nil || !bytes.Equal(back, data) {
		return nil, fmt.Errorf("not in nbformat's layout, so it cannot be rewritten in place (save it with Jupyter first)")
	}
	return nb, nil
}

func encodeNotebook(nb map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	err := enc.Encode(nb)
	return b.Bytes(), err
}

// codeSources returns the sources of a generic notebook's code cells.
func codeSources(nb map[string]any) []string {
	var out []string
	for _, c := range nb["cells"].([]any) {
		cell := c.(map[string]any)
		if cell["cell_type"] != "code" {
			continue
		}
		var b strings.Builder
		switch s := cell["source"].(type) {
		case string:
			b.WriteString(s)
		case []any:
			for _, line := range s {
				b.WriteString(line.(string))
			}
		}
		out = append(out, b.String())
	}
	return out
}

// setCodeSources replaces the sources of a generic notebook's code cells, each as a list of lines.
func setCodeSources(nb map[string]any, sources []string) {
	i := 0
	for _, c := range nb["cells"].([]any) {
		cell := c.(map[string]any)
		if cell["cell_type"] != "code" {
			continue
		}
		lines := []any{}
		for _, l := range strings.SplitAfter(sources[i], "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
		cell["source"] = lines
		i++
	}
}

// declKey names a top-level declaration: "F" for a function or type F, "T.M" for a method M of type T.
func declKey(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) == 1 {
			typ := d.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				return id.Name + "." + d.Name.Name
			}
		}
		return d.Name.Name
	case *ast.GenDecl:
		if d.Tok == token.TYPE && len(d.Specs) == 1 {
			return d.Specs[0].(*ast.TypeSpec).Name.Name
		}
	}
	return ""
}

// cellHead returns a GoNB cell's lines up to a "%%" line, without GoNB's "!" and "%" special lines.
func cellHead(source string) string {
	var lines []string
	for _, line := range strings.Split(source, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "%%" {
			break
		}
		if strings.HasPrefix(trimmed, "!") || strings.HasPrefix(trimmed, "%") {
			continue
		}
		lines = append(lines, line)
	}
	return "package main\n" + strings.Join(lines, "\n")
}
