// Package sizes holds no code: its test keeps every function of the module's non-test Go within 80 lines and every
// file within 600.
package sizes

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	// maxFuncLines is the most lines a function may have, from its func line to its closing brace inclusive.
	maxFuncLines = 80
	// maxFileLines is the most lines a file may have.
	maxFileLines = 600
)

// exceptions names what may be over a size, as "path" for a file or "path Func" (a method as "path Type.Method")
// for a function, with the lines it may have (none today). The test fails on an entry that is within the sizes or
// names nothing, so that the table holds only what needs it.
var exceptions = map[string]int{}

// TestSizes parses every non-test Go file of the module (the files the go command reads: outside testdata, vendor,
// folders whose name begins with "." or "_" and nested modules) and fails naming each function over maxFuncLines
// lines and each file over maxFileLines lines. A function's lines run from its func line to its closing brace
// inclusive (its doc comment is not counted); a file's are all its lines.
func TestSizes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	check := func(name string, lines, limit int) {
		if allowed, ok := exceptions[name]; ok {
			seen[name] = true
			if lines <= limit {
				t.Errorf("%s: %d lines, within %d: remove its exception", name, lines, limit)
			}
			limit = allowed
		}
		if lines > limit {
			t.Errorf("%s: %d lines, over %d", name, lines, limit)
		}
	}
	for _, path := range goFiles(t, root) {
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		check(rel, fset.File(file.Pos()).LineCount(), maxFileLines)
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Type.Func).Line + 1
			check(rel+" "+funcName(fn), lines, maxFuncLines)
		}
	}
	for name := range exceptions {
		if !seen[name] {
			t.Errorf("exception %q names no file or function of the module: remove it", name)
		}
	}
}

// funcName is a function's name, or Type.Method for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fmt.Sprintf("%T.%s", typ, fn.Name.Name)
	}
}

// goFiles lists the module's non-test Go files under root, as TestSizes describes them.
func goFiles(t *testing.T, root string) []string {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" ||
				name == "vendor" || name == "node_modules" || isFile(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") &&
			!strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func isFile(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
