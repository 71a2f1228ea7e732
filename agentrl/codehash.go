package agentrl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"runtime"
	"sort"
)

// CodeHash returns a short hash of the Go code that the top-level declaration root reaches in the caller's source
// file: root's own declaration and, transitively, every top-level function, method, type, variable and constant
// of that file whose name appears in a reached declaration. Comments do not count.
//
// A notebook adds it to the cache key of a result that its own cells compute (Key(name, …, CodeHash("run"))),
// so that editing the chapter code shown in a cell makes the result computed by the old code unusable, where it
// would otherwise be loaded as if nothing had changed. GoNB writes the declarations of every executed cell into
// the one source file of the cell's program, so a cell's call sees the code of all of them. The library's own code
// is covered by CodeVersion.
func CodeHash(root string) (string, error) {
	_, file, _, ok := runtime.Caller(1)
	if !ok {
		return "", errors.New("agentrl: CodeHash: the caller's source file is unknown")
	}
	return codeHash(file, root)
}

// codeHash is CodeHash for the declarations of file.
func codeHash(file, root string) (string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("agentrl: CodeHash(%q): %w", root, err)
	}
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, file, src, goparser.SkipObjectResolution)
	if err != nil {
		return "", fmt.Errorf("agentrl: CodeHash(%q): %w", root, err)
	}
	decls := topLevel(f)
	if len(decls[root]) == 0 {
		return "", fmt.Errorf("agentrl: CodeHash: no top-level declaration %q in %s", root, file)
	}

	// Walk the names that reached declarations mention, from root.
	reached := map[ast.Node]bool{}
	seen, queue := map[string]bool{root: true}, []string{root}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, d := range decls[name] {
			reached[d] = true
			ast.Inspect(d, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && len(decls[id.Name]) > 0 && !seen[id.Name] {
					seen[id.Name] = true
					queue = append(queue, id.Name)
				}
				return true
			})
		}
	}

	nodes := make([]ast.Node, 0, len(reached))
	for d := range reached {
		nodes = append(nodes, d)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Pos() < nodes[j].Pos() })
	h := sha256.New()
	for _, d := range nodes {
		h.Write(src[fset.Position(d.Pos()).Offset:fset.Position(d.End()).Offset])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// topLevel maps each name declared at the top level of f to its declarations: a function's, a type's (with its
// methods), a variable's or a constant's specification.
func topLevel(f *ast.File) map[string][]ast.Node {
	decls := map[string][]ast.Node{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = receiverType(d.Recv.List[0].Type)
			}
			decls[name] = append(decls[name], d)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					decls[s.Name.Name] = append(decls[s.Name.Name], s)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						decls[n.Name] = append(decls[n.Name], s)
					}
				}
			}
		}
	}
	return decls
}

// receiverType is the name of a method receiver's type: T for T, *T, T[P] and *T[P].
func receiverType(x ast.Expr) string {
	for {
		switch t := x.(type) {
		case *ast.StarExpr:
			x = t.X
		case *ast.IndexExpr:
			x = t.X
		case *ast.IndexListExpr:
			x = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
