package notebooks

import (
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCellImportsAreRequired checks that every package a notebook cell imports from outside this module is
// listed in cellimports.go, so that `go mod tidy` keeps its module in go.mod and its sums in go.sum.
func TestCellImportsAreRequired(t *testing.T) {
	listed := importsOf(t, "cellimports.go", nil)
	cells, notebooks := chapterCells(t)
	external := 0
	for _, c := range cells {
		for _, imp := range importsOf(t, c.path, []byte(cellHead(c.source))) {
			if strings.HasPrefix(imp, "github.com/agentrl-go/agentrl/") || !strings.Contains(imp, ".") {
				continue // this module, or the standard library
			}
			external++
			if !slices.Contains(listed, imp) {
				t.Errorf("%s cell %d imports %q, which cellimports.go does not list: `go mod tidy` would drop it", c.path, c.index, imp)
			}
		}
	}
	if notebooks > 0 && external == 0 {
		t.Error("no notebook cell imports a package from outside the module: is the cell parser broken?")
	}
}

// importsOf returns the import paths of a Go file: src, or the file at name when src is nil.
func importsOf(t *testing.T, name string, src []byte) []string {
	t.Helper()
	var source any // nil: parser.ParseFile reads the file
	if src != nil {
		source = src
	}
	f, err := parser.ParseFile(token.NewFileSet(), name, source, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var paths []string
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		paths = append(paths, p)
	}
	return paths
}
