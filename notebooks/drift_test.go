package notebooks

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSavedCodeDoesNotDrift checks the chapter's #@save code: every function, type or method that a notebook
// cell declares under a name the agentrl package also declares must be the library's declaration, doc comment
// included, once the notebook's "agentrl." qualifiers are removed.
func TestSavedCodeDoesNotDrift(t *testing.T) {
	lib := libraryDecls(t, filepath.Join("..", "agentrl"))
	cells, notebooks := chapterCells(t)
	shown := 0
	for _, c := range cells {
		for name, src := range cellDecls(t, c.source) {
			want, ok := lib[name]
			if !ok {
				continue
			}
			shown++
			if src != want {
				t.Errorf("%s cell %d: %s differs from agentrl:\n%s", c.path, c.index, name, Diff(want, src, 2, 40))
			}
		}
	}
	if notebooks > 0 && shown == 0 {
		t.Error("no notebook shows any agentrl declaration")
	}
	t.Logf("%d saved declarations shown in %d notebooks match the library", shown, notebooks)
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

// render prints a declaration with its doc comment in gofmt style.
func render(fset *token.FileSet, file *ast.File, d ast.Decl) string {
	var buf bytes.Buffer
	cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
	_ = cfg.Fprint(&buf, fset, &printer.CommentedNode{Node: d, Comments: file.Comments})
	return buf.String()
}

func libraryDecls(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	decls := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if k := declKey(d); k != "" {
				decls[k] = render(fset, file, d)
			}
		}
	}
	return decls
}

// chapterCell is one code cell of a committed notebook in this folder.
type chapterCell struct {
	path   string // the notebook
	index  int    // among its code cells
	source string
}

// chapterCells returns the code cells of every notebook in this folder, and how many notebooks there are.
func chapterCells(t *testing.T) (cells []chapterCell, notebooks int) {
	t.Helper()
	paths, err := filepath.Glob("*.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		nb, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, cell := range nb.CodeCells() {
			cells = append(cells, chapterCell{path, i, string(cell.Source)})
		}
	}
	return cells, len(paths)
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

// cellDecls parses the declarations of a GoNB cell (its cellHead).
func cellDecls(t *testing.T, source string) map[string]string {
	t.Helper()
	src := cellHead(source)
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "cell.go", src, parser.ParseComments)
	if err != nil {
		return nil // cells that are not plain declarations show no library code
	}
	decls := map[string]string{}
	for _, d := range file.Decls {
		if k := declKey(d); k != "" {
			decls[k] = strings.ReplaceAll(render(fset, file, d), "agentrl.", "")
		}
	}
	return decls
}
