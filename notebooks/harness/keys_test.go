package harness

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/agentrl-go/agentrl/codekey"
)

// keyedCode names, per cell program, the declarations whose code names a stored result of the chapter: the loops,
// estimators, environments and metrics that its runs hold as values, and the functions they are given.
var keyedCode = map[string][]string{
	"12.2.go": {"TrainCredit", "WarmCritic"},
	"12.4.go": {"TrainContext"},
	"12.5.go": {"EarlyStop"},
	"12.6.go": {"formatPass", "mixedFactory"},
	"12.7.go": {"MaskedTruncation", "maskedRun"},
}

// TestCellCodeKeys is the code half of the mutation test of the chapter's runs (ch12's TestRunKeysHoldEveryValue is
// the value half), on the cell programs the notebooks assemble (testdata/cells): removing any statement of the code
// a run reaches, or changing any literal in it, changes the key's hash of that code; a comment, a local variable's
// new name or the layout do not.
func TestCellCodeKeys(t *testing.T) {
	for file, roots := range keyedCode {
		src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "cells", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, root := range roots {
			t.Run(file+"/"+root, func(t *testing.T) {
				ref := sourceHash(t, src, root)
				ranges, err := codekey.Reached(src, root)
				if err != nil {
					t.Fatal(err)
				}
				edits, keep := codeEdits(t, src, ranges)
				changed := 0
				for _, e := range edits {
					if h, err := codekey.SourceHash(e.apply(src), root); err == nil && h == ref {
						t.Errorf("%s: the hash did not change", e.what)
					} else {
						changed++
					}
				}
				for _, e := range keep {
					if h := sourceHash(t, e.apply(src), root); h != ref {
						t.Errorf("%s: the hash changed", e.name())
					}
				}
				if changed < 3 || len(keep) < 2 {
					t.Errorf("%d code edits and %d neutral ones: the test found too little to edit", changed, len(keep))
				}
				t.Logf("%d declarations reached, %d code edits change the hash, %d neutral edits keep it", len(ranges), changed, len(keep))
			})
		}
	}
}

func sourceHash(t *testing.T, src []byte, root string) string {
	t.Helper()
	h, err := codekey.SourceHash(src, root)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// edit replaces src[start:end] with text.
type edit struct {
	what       string
	start, end int
	text       string
}

func (e edit) apply(src []byte) []byte {
	out := append([]byte(nil), src[:e.start]...)
	out = append(out, e.text...)
	return append(out, src[e.end:]...)
}

// renameEdits is several edits applied together (a local renamed at each of its uses).
type renameEdits struct {
	what  string
	edits []edit // in source order, not overlapping
}

// codeEdits returns, for the declarations in ranges, one edit per statement (replaced by an empty block) and per
// literal (changed), and the neutral edits: a comment before each declaration, each local renamed everywhere.
func codeEdits(t *testing.T, src []byte, ranges [][2]int) (code []edit, neutral []interface {
	apply([]byte) []byte
	name() string
}) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "cells.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	inside := func(n ast.Node) bool {
		for _, r := range ranges {
			if r[0] <= off(n.Pos()) && off(n.End()) <= r[1] {
				return true
			}
		}
		return false
	}
	locals := map[*ast.Object][]*ast.Ident{}
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil || !inside(n) {
			return true
		}
		switch n := n.(type) {
		case *ast.ExprStmt, *ast.AssignStmt, *ast.ReturnStmt, *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt, *ast.IncDecStmt:
			code = append(code, edit{fmt.Sprintf("statement at %s removed", fset.Position(n.Pos())), off(n.Pos()), off(n.End()), "{}"})
		case *ast.BasicLit:
			code = append(code, edit{fmt.Sprintf("literal %s at %s changed", n.Value, fset.Position(n.Pos())), off(n.Pos()), off(n.End()), changedLiteral(n)})
		case *ast.Ident:
			if n.Obj != nil && n.Obj.Kind == ast.Var && !topLevelObj(f, n.Obj) {
				locals[n.Obj] = append(locals[n.Obj], n)
			}
		}
		return true
	})
	for _, r := range ranges {
		neutral = append(neutral, single{edit{fmt.Sprintf("comment before the declaration at %d", r[0]), r[0], r[0], "// an annotation\n"}})
	}
	objs := make([]*ast.Object, 0, len(locals))
	for o := range locals {
		objs = append(objs, o)
	}
	sort.Slice(objs, func(i, j int) bool { return locals[objs[i]][0].Pos() < locals[objs[j]][0].Pos() })
	for _, o := range objs {
		if o.Name == "_" {
			continue
		}
		r := renameEdits{what: fmt.Sprintf("local %s at %s renamed", o.Name, fset.Position(locals[o][0].Pos()))}
		for _, id := range locals[o] {
			r.edits = append(r.edits, edit{r.what, off(id.Pos()), off(id.End()), "renamedLocal"})
		}
		neutral = append(neutral, r)
	}
	return code, neutral
}

// single is one neutral edit.
type single struct{ edit }

func (s single) name() string { return s.what }

func (r renameEdits) name() string { return r.what }

func (r renameEdits) apply(src []byte) []byte {
	var out bytes.Buffer
	last := 0
	for _, e := range r.edits {
		out.Write(src[last:e.start])
		out.WriteString(e.text)
		last = e.end
	}
	out.Write(src[last:])
	return out.Bytes()
}

// changedLiteral is another literal of the same kind.
func changedLiteral(l *ast.BasicLit) string {
	switch l.Kind {
	case token.STRING:
		if l.Value[0] == '`' {
			return "`x" + l.Value[1:]
		}
		return `"x` + l.Value[1:]
	case token.CHAR:
		return "'x'"
	}
	return l.Value + "7"
}

// topLevelObj reports whether o is declared at the top level of f.
func topLevelObj(f *ast.File, o *ast.Object) bool { return f.Scope.Lookup(o.Name) == o }
