package codekey_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
)

const module = "github.com/agentrl-go/agentrl"

// moduleRoot is the repository's root, the directory above this package's.
func moduleRoot(t *testing.T) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// modulePackages lists the module's packages on disk (their directories, relative to root): every directory with a
// Go file that is not a test, outside testdata, hidden and vendored folders and nested modules.
func modulePackages(t *testing.T, root string) []string {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" ||
				name == "_build" || fileExists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			if !slices.Contains(dirs, rel) {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestCodeIsTheImportGraph checks that the code a key holds is found, not listed: for every package of the module,
// the packages whose code a key rooted there holds are those `go list -deps` names of this module.
func TestCodeIsTheImportGraph(t *testing.T) {
	root := moduleRoot(t)
	for _, rel := range modulePackages(t, root) {
		pkg := module
		if rel != "." {
			pkg += "/" + filepath.ToSlash(rel)
		}
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var want []string
		for _, dep := range strings.Fields(string(out)) {
			if dep == module || strings.HasPrefix(dep, module+"/") {
				want = append(want, dep)
			}
		}
		slices.Sort(want)
		_, got, err := codekey.CodeOf(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the key holds %v, go list -deps %v", pkg, got, want)
		}
	}
}

// copyModule copies the module's go.mod, go.sum and every package's files (tests aside) into a new directory.
func copyModule(t *testing.T, root string) string {
	dst := t.TempDir()
	for _, f := range []string{"go.mod", "go.sum"} {
		copyFile(t, filepath.Join(root, f), filepath.Join(dst, f))
	}
	for _, rel := range modulePackages(t, root) {
		entries, err := os.ReadDir(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() && !strings.HasSuffix(e.Name(), "_test.go") {
				copyFile(t, filepath.Join(root, rel, e.Name()), filepath.Join(dst, rel, e.Name()))
			} else if e.IsDir() && e.Name() == "theme" { // embedded by the site
				if err := os.CopyFS(filepath.Join(dst, rel, e.Name()), os.DirFS(filepath.Join(root, rel, e.Name()))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return dst
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// appendTo appends text to file.
func appendTo(t *testing.T, file, text string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestEveryPackageEditRekeys edits, in a copy of the module, every package of it in turn: a declaration added to one
// of its files changes the code of every key that reaches the package, a comment changes none, and the key of a
// package the edited one does not reach stays. A new file and a new package, once imported, join the key.
func TestEveryPackageEditRekeys(t *testing.T) {
	copied := copyModule(t, moduleRoot(t))
	later := time.Now().Add(time.Hour) // this program takes itself for started after every edit
	codekey.ForgetCode(later)
	defer codekey.ForgetCode(time.Now())
	digest := func(rel string) string {
		t.Helper()
		codekey.ForgetCode(later)
		d, _, err := codekey.CodeOf(filepath.Join(copied, rel))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	runs, store := digest("runs"), digest("store")
	for _, rel := range modulePackages(t, copied) {
		files, _ := filepath.Glob(filepath.Join(copied, rel, "*.go"))
		before := digest(rel)
		appendTo(t, files[0], "\n// a comment is not code\n")
		if digest(rel) != before {
			t.Errorf("%s: a comment changed the key", rel)
		}
		appendTo(t, files[0], "\nconst keyEditProbe = 1\n")
		if digest(rel) == before {
			t.Errorf("%s: an added declaration did not change the key", rel)
		}
	}
	if digest("runs") == runs {
		t.Error("runs: edits of the packages it imports did not change its key")
	}
	if digest("store") == store {
		t.Error("store: edits of itself did not change its key")
	}
	// A new file joins its package's key; a new package joins once imported.
	before := digest("runs")
	if err := os.WriteFile(filepath.Join(copied, "runs", "new.go"), []byte("package runs\n\nconst added = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if digest("runs") == before {
		t.Error("a new file of runs did not change its key")
	}
	if err := os.MkdirAll(filepath.Join(copied, "internal", "probe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(copied, "internal", "probe", "probe.go"), []byte("package probe\n\nconst P = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = digest("runs")
	if err := os.WriteFile(filepath.Join(copied, "runs", "new.go"),
		[]byte("package runs\n\nimport \"github.com/agentrl-go/agentrl/internal/probe\"\n\nconst added = probe.P\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	codekey.ForgetCode(later)
	if _, pkgs, _ := codekey.CodeOf(filepath.Join(copied, "runs")); !slices.Contains(pkgs, module+"/internal/probe") {
		t.Errorf("a newly imported package is not in the key: %v", pkgs)
	}
	after := digest("runs")
	if err := os.WriteFile(filepath.Join(copied, "internal", "probe", "probe.go"), []byte("package probe\n\nconst P = 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if digest("runs") == after || after == before {
		t.Error("an edit of a newly imported package did not change the key of the package importing it")
	}
}

// TestChangedSinceStart checks that a key is refused when its code on disk changed after the program started and
// before the program read it, and that a package read before such a change keeps the code it was read with (the
// program's).
func TestChangedSinceStart(t *testing.T) {
	copied := copyModule(t, moduleRoot(t))
	defer codekey.ForgetCode(time.Now())
	codekey.ForgetCode(time.Now().Add(-time.Hour))
	if _, _, err := codekey.CodeOf(filepath.Join(copied, "store")); err == nil || !strings.Contains(err.Error(), "since this program started") {
		t.Errorf("code newer than the program: %v, want a refusal", err)
	}
	codekey.ForgetCode(time.Now().Add(time.Second))
	before, _, err := codekey.CodeOf(filepath.Join(copied, "store"))
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	appendTo(t, filepath.Join(copied, "store", "store.go"), "\nconst keyEditProbe = 1\n")
	if err := os.Chtimes(filepath.Join(copied, "store", "store.go"), later, later); err != nil {
		t.Fatal(err)
	}
	if after, _, err := codekey.CodeOf(filepath.Join(copied, "store")); err != nil || after != before {
		t.Errorf("a package read before an edit: %v, changed %v; want the code it was read with", err, after != before)
	}
	appendTo(t, filepath.Join(copied, "ch12", "setup.go"), "\nconst keyEditProbe = 1\n")
	if err := os.Chtimes(filepath.Join(copied, "ch12", "setup.go"), later, later); err != nil {
		t.Fatal(err)
	}
	if _, _, err := codekey.CodeOf(filepath.Join(copied, "ch12")); err == nil || !strings.Contains(err.Error(), "setup.go") {
		t.Errorf("a package first read after its edit: %v, want a refusal naming setup.go", err)
	}
}

// TestPackageReads: a package's calls that read the process's surroundings (the environment, files, the clock) are
// found in its code, and its own directive declares them; the library's packages that read declare it, so a key of
// the library's values names no read, while a package that reads and says nothing makes a key reaching it open.
func TestPackageReads(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", "package p\n\nimport env \"os\"\n\nfunc Bonus() string { return env.Getenv(\"BONUS\") }\n")
	write("b.go", "package p\n\nimport \"time\"\n\nvar _ = time.Second\n\nfunc Stamp() int64 { return time.Now().Unix() }\n")
	write("c_test.go", "package p\n\nimport \"os\"\n\nvar _ = os.ReadFile\n")
	reads, declared, err := codekey.PackageReads(dir)
	if err != nil || !slices.Equal(reads, []string{"os.Getenv", "time.Now"}) || declared {
		t.Errorf("reads %q, declared %v (%v): want os.Getenv and time.Now, undeclared", reads, declared, err)
	}
	write("go.mod", "module example.com/p\n\ngo 1.26\n")
	later := time.Now().Add(time.Hour) // this program takes itself for started after every edit
	defer codekey.ForgetCode(time.Now())
	codekey.ForgetCode(later)
	if open := codekey.ReadsOpen([]string{dir}); !slices.Equal(open, []string{"example.com/p (os.Getenv, time.Now)"}) {
		t.Errorf("a key reaching the package: open %q, want it named with its reads", open)
	}
	write("doc.go", "//codekey:reads BONUS: a test's\n\npackage p\n")
	if _, declared, _ := codekey.PackageReads(dir); !declared {
		t.Error("the directive is not found")
	}
	codekey.ForgetCode(later)
	if open := codekey.ReadsOpen([]string{dir}); len(open) > 0 {
		t.Errorf("a package that declares its reads: open %q, want none", open)
	}
	for _, lib := range []string{"store", "codekey", "gomlxmodel", "internal/pjrt", "internal/xlacache", "agentrl", "runs", "ch12"} {
		reads, declared, err := codekey.PackageReads(filepath.Join("..", lib))
		if err != nil || len(reads) > 0 && !declared {
			t.Errorf("%s reads %q and declares neither what nor its numerics (%v)", lib, reads, err)
		}
	}
}
