package codekey

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/scanner"
	"go/token"
	"hash"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
)

// source is a parsed Go file and its top-level declarations.
type source struct {
	name  string // the file's name
	src   []byte
	fset  *token.FileSet
	file  *ast.File
	decls map[string][]ast.Node    // topLevel's map
	kind  map[ast.Node]token.Token // the keyword of a type, variable or constant specification's declaration
}

// parsed caches the files this process parsed, from disk (a cell program's source does not change while it runs) or
// embedded (the library's).
var parsed sync.Map // file name (an embedded library file: "embedded:PKG/FILE") → *source

func parseFile(file string) (*source, error) {
	if s, ok := parsed.Load(file); ok {
		return s.(*source), nil
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := parseSource(file, src)
	if err != nil {
		return nil, err
	}
	parsed.Store(file, s)
	return s, nil
}

// parseSource parses the contents src of file, resolving identifiers (a local name does not reach a top-level one).
func parseSource(file string, src []byte) (*source, error) {
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, file, src, 0)
	if err != nil {
		return nil, err
	}
	s := &source{name: file, src: src, fset: fset, file: f, kind: map[ast.Node]token.Token{}}
	s.decls = topLevel(f, s.kind)
	return s, nil
}

// hash hashes the tokens of roots and of every declaration they reach, transitively, in source order.
func (s *source) hash(roots []ast.Node) string {
	h := sha256.New()
	for _, d := range s.reach(roots) {
		s.writeDecl(h, d, "")
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// declHash hashes the tokens of the declaration d alone, reading qualifier.X as X when qualifier is not "".
func (s *source) declHash(d ast.Node, qualifier string) string {
	h := sha256.New()
	s.writeDecl(h, d, qualifier)
	return hex.EncodeToString(h.Sum(nil))
}

// writeDecl writes the declaration d's keyword (for a specification) and tokens to h, with its local names
// (parameters, results, local variables, constants and types) written as their order of declaration: renaming one
// is not an edit of the code.
func (s *source) writeDecl(h hash.Hash, d ast.Node, qualifier string) {
	if k, ok := s.kind[d]; ok {
		fmt.Fprintf(h, "%s\x00", k)
	}
	start, end := s.fset.Position(d.Pos()).Offset, s.fset.Position(d.End()).Offset
	writeTokens(h, s.src[start:end], qualifier, s.localNames(d, start))
}

// localNames maps the offset (from base) of each identifier in d that names a local declaration to a name that
// says only which local it is.
func (s *source) localNames(d ast.Node, base int) map[int]string {
	order := map[*ast.Object]int{}
	names := map[int]string{}
	ast.Inspect(d, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || id.Obj == nil || !s.isLocal(id) {
			return true
		}
		k, ok := order[id.Obj]
		if !ok {
			k = len(order)
			order[id.Obj] = k
		}
		names[s.fset.Position(id.Pos()).Offset-base] = fmt.Sprintf("local%d", k)
		return true
	})
	return names
}

// reach returns roots and every declaration they reach, transitively (a reached declaration's code names it), in
// source order.
func (s *source) reach(roots []ast.Node) []ast.Node {
	reached := map[ast.Node]bool{}
	seen := map[string]bool{}
	queue := append([]ast.Node(nil), roots...)
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if reached[d] {
			continue
		}
		reached[d] = true
		ast.Inspect(d, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && !seen[id.Name] && len(s.decls[id.Name]) > 0 && !s.isLocal(id) {
				seen[id.Name] = true
				queue = append(queue, s.decls[id.Name]...)
			}
			return true
		})
	}
	nodes := make([]ast.Node, 0, len(reached))
	for d := range reached {
		nodes = append(nodes, d)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Pos() < nodes[j].Pos() })
	return nodes
}

// isLocal reports whether id names a declaration inside a function (a parameter, a result, a local variable,
// constant or type), which the parser resolved in the function's scope: such a name does not reach the top-level
// declaration of the same name. Other identifiers (a top-level name, a field or method selected by name, a
// predeclared one) reach the top-level declarations of their name.
func (s *source) isLocal(id *ast.Ident) bool {
	if id.Obj == nil {
		return false
	}
	switch d := id.Obj.Decl.(type) {
	case *ast.FuncDecl:
		return false
	case *ast.TypeSpec:
		_, top := s.kind[d]
		return !top
	case *ast.ValueSpec:
		_, top := s.kind[d]
		return !top
	}
	return true // a parameter or result (*ast.Field), an assignment, a range clause, a label
}

// declsAt returns the top-level declarations that span line.
func (s *source) declsAt(line int) []ast.Node {
	var roots []ast.Node
	for _, nodes := range s.decls {
		for _, n := range nodes {
			if s.fset.Position(n.Pos()).Line <= line && line <= s.fset.Position(n.End()).Line {
				roots = append(roots, n)
			}
		}
	}
	return roots
}

// nameOf is the top-level name under which d is declared.
func (s *source) nameOf(d ast.Node) string {
	for name, nodes := range s.decls {
		for _, n := range nodes {
			if n == d {
				return name
			}
		}
	}
	return ""
}

// writeTokens writes the tokens of the Go source src to h: each operator, keyword and literal, and one ";" for
// each semicolon, written or implied by a line break, except before a closing ")" or "}" (where a semicolon is
// optional: "{ return x }" and "{\n\treturn x\n}" are the same code). Comments and layout are not tokens, so they
// do not count. qualifier.X reads as X when qualifier is not ""; an identifier at an offset of rename is written
// as rename's name for it.
func writeTokens(h hash.Hash, src []byte, qualifier string, rename map[int]string) {
	type scanned struct {
		tok token.Token
		lit string
	}
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(src))
	var sc scanner.Scanner
	sc.Init(file, src, nil, 0)
	var toks []scanned
	for {
		pos, tok, lit := sc.Scan()
		n := len(toks)
		if tok == token.PERIOD && n > 0 && qualifier != "" && toks[n-1].tok == token.IDENT && toks[n-1].lit == qualifier &&
			(n == 1 || toks[n-2].tok != token.PERIOD) {
			toks = toks[:n-1] // qualifier.X reads as X
			continue
		}
		if tok == token.IDENT {
			if name, ok := rename[file.Offset(pos)]; ok {
				lit = name
			}
		}
		toks = append(toks, scanned{tok, lit})
		if tok == token.EOF {
			break
		}
	}
	semicolon := false // a semicolon is pending
	for _, t := range toks {
		if t.tok == token.SEMICOLON {
			semicolon = true
			continue
		}
		if semicolon && t.tok != token.RBRACE && t.tok != token.RPAREN && t.tok != token.EOF {
			h.Write([]byte(";\x00"))
		}
		semicolon = false
		switch {
		case t.tok == token.EOF:
			return
		case t.tok.IsLiteral():
			h.Write([]byte(t.lit))
		default:
			h.Write([]byte(t.tok.String()))
			if t.tok == token.ILLEGAL {
				h.Write([]byte(t.lit))
			}
		}
		h.Write([]byte{0})
	}
}

// topLevel maps each name declared at the top level of f to its declarations: a function's, a type's (with its
// methods), a variable's or a constant's specification. It records each specification's keyword in kind.
func topLevel(f *ast.File, kind map[ast.Node]token.Token) map[string][]ast.Node {
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
					kind[s] = d.Tok
				case *ast.ValueSpec:
					for _, n := range s.Names {
						decls[n.Name] = append(decls[n.Name], s)
					}
					kind[s] = d.Tok
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

// goFiles returns the non-test Go files of fsys, sorted by name.
func goFiles(fsys fs.FS) []string {
	files, err := fs.Glob(fsys, "*.go")
	if err != nil {
		panic(err) // the pattern is valid
	}
	var out []string
	for _, f := range files { // sorted by fs.Glob
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	return out
}

// SourceHash is the hash under which a key holds the code of the top-level declaration name of the Go file src and
// of everything it reaches: what Of writes for a type or function of a notebook's cell program declared there. As
// Of does, it refuses code that reads a package variable whose value other code may change (mutableGlobals).
func SourceHash(src []byte, name string) (string, error) {
	s, err := parseSource("source.go", src)
	if err != nil {
		return "", err
	}
	if len(s.decls[name]) == 0 {
		return "", fmt.Errorf("codekey: no top-level declaration %q", name)
	}
	if err := s.readsMutable(s.reach(s.decls[name])); err != nil {
		return "", fmt.Errorf("codekey: %s: %w", name, err)
	}
	return s.hash(s.decls[name]), nil
}

// Reached returns the byte ranges [start, end) in src of the top-level declarations that name reaches (its own
// included), in source order.
func Reached(src []byte, name string) ([][2]int, error) {
	s, err := parseSource("source.go", src)
	if err != nil {
		return nil, err
	}
	if len(s.decls[name]) == 0 {
		return nil, fmt.Errorf("codekey: no top-level declaration %q", name)
	}
	var out [][2]int
	for _, d := range s.reach(s.decls[name]) {
		out = append(out, [2]int{s.fset.Position(d.Pos()).Offset, s.fset.Position(d.End()).Offset})
	}
	return out, nil
}
