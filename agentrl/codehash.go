package agentrl

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/scanner"
	"go/token"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// CodeHash returns a short hash of the Go code that the top-level declaration root reaches in the caller's source
// file: root's own declaration and, transitively, every top-level function, method, type, variable and constant
// of that file whose name appears in a reached declaration. Only the code's tokens count: comments and layout
// (spaces, line breaks, blank lines) do not, so annotating a cell keeps its results while any edit of the code
// it reaches changes the hash.
//
// A notebook adds it to the cache key of a result that its own cells compute (Key(name, …, CodeHash("run"))),
// so that editing the chapter code shown in a cell makes the result computed by the old code unusable, where it
// would otherwise be loaded as if nothing had changed. GoNB writes the declarations of every executed cell into
// the one source file of the cell's program, so a cell's call sees the code of all of them. Cached adds the hash
// of its compute function's code by itself (FuncCode), and the library's own code is in every key (CodeVersion).
func CodeHash(root string) (string, error) {
	_, file, _, ok := runtime.Caller(1)
	if !ok {
		return "", errors.New("agentrl: CodeHash: the caller's source file is unknown")
	}
	return codeHash(file, root)
}

// codeHash is CodeHash for the declarations of file.
func codeHash(file, root string) (string, error) {
	s, err := parseSource(file)
	if err != nil {
		return "", fmt.Errorf("agentrl: CodeHash(%q): %w", root, err)
	}
	if len(s.decls[root]) == 0 {
		return "", fmt.Errorf("agentrl: CodeHash: no top-level declaration %q in %s", root, file)
	}
	return s.hash(s.decls[root]), nil
}

// FuncCode returns a short hash of the code of the function f (a func value of any type), or "" when f is the
// library's own code (agentrl's and gomlxmodel's, outside their tests), which CodeVersion covers, or a verbatim
// copy of agentrl's code (a notebook showing the library's #@save code, see funcCodeAt). Otherwise the
// hash is CodeHash's for the top-level declaration that holds f in its source file (f's own, or for a function
// literal the function or variable it is written in) and everything that declaration reaches: for a factory
// written in a notebook cell, the cell program's code that makes its environments. Values that f captures count
// only through the code that computes them.
//
// f's source file must be readable where the program runs (a notebook's cell program, or a program built from
// the repository without -trimpath); an error says when it is not.
func FuncCode(f any) (string, error) {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Func || v.IsNil() {
		return "", fmt.Errorf("agentrl: FuncCode: %T is not a non-nil function", f)
	}
	fn := runtime.FuncForPC(v.Pointer())
	if fn == nil {
		return "", errors.New("agentrl: FuncCode: the function is unknown to the runtime")
	}
	file, line := fn.FileLine(fn.Entry())
	name := fn.Name()
	if isLibraryFile(file) {
		return "", nil
	}
	if !strings.HasSuffix(file, ".go") {
		return "", fmt.Errorf("agentrl: FuncCode: %s has no Go source (%s); pass a function or a function literal, not a method value", name, file)
	}
	h, err := funcCodeAt(file, line)
	if err != nil {
		return "", fmt.Errorf("agentrl: FuncCode(%s): %w (its source file is needed to key what it computes)", name, err)
	}
	return h, nil
}

// funcCodeAt is FuncCode's hash for a function whose code starts at line of file: the hash of the top-level
// declarations that span that line and of everything they reach. When each of those declarations is, token for
// token, a declaration of agentrl under the same name (a notebook's copy of the library's #@save code, its
// "agentrl." qualifiers aside), the code is the library's, which CodeVersion covers, and it returns "" as FuncCode
// does for the library's functions: a notebook's unedited copy keys its results as the library's function does,
// and any edit of the copy keys them apart.
func funcCodeAt(file string, line int) (string, error) {
	s, err := parseSource(file)
	if err != nil {
		return "", err
	}
	var roots []ast.Node
	for _, nodes := range s.decls {
		for _, n := range nodes {
			if s.fset.Position(n.Pos()).Line <= line && line <= s.fset.Position(n.End()).Line {
				roots = append(roots, n)
			}
		}
	}
	if len(roots) == 0 {
		return "", fmt.Errorf("no top-level declaration at %s:%d", file, line)
	}
	if s.showsLibrary(s.reach(roots)) {
		return "", nil
	}
	return s.hash(roots), nil
}

// showsLibrary reports whether every declaration of decls is the tokens of a declaration of agentrl with the same
// name, read with "agentrl." qualifiers removed.
func (s *source) showsLibrary(decls []ast.Node) bool {
	lib := libraryDecls()
	for _, d := range decls {
		name := s.nameOf(d)
		if name == "" || !lib[name][s.declHash(d, "agentrl")] {
			return false
		}
	}
	return true
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

// declHash hashes the tokens of the declaration d (with its keyword, for a specification), reading qualifier.X as
// X when qualifier is not "".
func (s *source) declHash(d ast.Node, qualifier string) string {
	h := sha256.New()
	if k, ok := s.kind[d]; ok {
		fmt.Fprintf(h, "%s\x00", k)
	}
	writeTokens(h, s.src[s.fset.Position(d.Pos()).Offset:s.fset.Position(d.End()).Offset], qualifier)
	return hex.EncodeToString(h.Sum(nil))
}

// libraryDecls maps each top-level name of agentrl's own code (tests excluded) to the hashes of its declarations.
var libraryDecls = sync.OnceValue(func() map[string]map[string]bool {
	decls := map[string]map[string]bool{}
	files, err := fs.Glob(librarySource, "*.go")
	if err != nil {
		panic(err) // the pattern is valid
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := fs.ReadFile(librarySource, file)
		if err != nil {
			panic(fmt.Sprintf("agentrl: embedded %s: %v", file, err)) // embedded files are readable
		}
		s, err := parseSourceBytes(file, src)
		if err != nil {
			panic(fmt.Sprintf("agentrl: embedded %s: %v", file, err)) // the package compiles
		}
		for name, nodes := range s.decls {
			for _, n := range nodes {
				if decls[name] == nil {
					decls[name] = map[string]bool{}
				}
				decls[name][s.declHash(n, "")] = true
			}
		}
	}
	return decls
})

// libraryDirs are the directories of the packages whose code CodeVersion hashes, as the runtime names source
// files.
var libraryDirs = sync.OnceValue(func() map[string]bool {
	dirs := map[string]bool{}
	for _, f := range []any{CodeVersion, gomlxmodel.ReadModel} {
		file, _ := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).FileLine(reflect.ValueOf(f).Pointer())
		dirs[filepath.Dir(file)] = true
	}
	return dirs
})

// isLibraryFile reports whether file, as the runtime names a function's source file, is library code outside the
// tests. (A function's name does not tell: a closure of a library function inlined elsewhere is named after the
// function it was inlined into.)
func isLibraryFile(file string) bool {
	return !strings.HasSuffix(file, "_test.go") && libraryDirs()[filepath.Dir(file)]
}

// source is a parsed Go file and its top-level declarations.
type source struct {
	src   []byte
	fset  *token.FileSet
	decls map[string][]ast.Node    // topLevel's map
	kind  map[ast.Node]token.Token // the keyword of a type, variable or constant specification's declaration
}

func parseSource(file string) (*source, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return parseSourceBytes(file, src)
}

// parseSourceBytes is parseSource for the contents src of file.
func parseSourceBytes(file string, src []byte) (*source, error) {
	fset := token.NewFileSet()
	f, err := goparser.ParseFile(fset, file, src, 0) // with objects: a local name does not reach a top-level one
	if err != nil {
		return nil, err
	}
	s := &source{src: src, fset: fset, kind: map[ast.Node]token.Token{}}
	s.decls = topLevel(f, s.kind)
	return s, nil
}

// hash hashes the tokens of roots and of every declaration they reach, transitively, in source order.
func (s *source) hash(roots []ast.Node) string {
	h := sha256.New()
	for _, d := range s.reach(roots) {
		if k, ok := s.kind[d]; ok {
			fmt.Fprintf(h, "%s\x00", k)
		}
		hashTokens(h, s.src[s.fset.Position(d.Pos()).Offset:s.fset.Position(d.End()).Offset])
		h.Write([]byte{0xff})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
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

// hashTokens writes the tokens of the Go source src to h: each operator, keyword and literal, and one ";" for
// each semicolon, written or implied by a line break, except before a closing ")" or "}" (where a semicolon is
// optional: "{ return x }" and "{\n\treturn x\n}" are the same code). Comments and layout are not tokens, so they
// do not count.
func hashTokens(h hash.Hash, src []byte) { writeTokens(h, src, "") }

// writeTokens is hashTokens, reading qualifier.X as X when qualifier is not "".
func writeTokens(h hash.Hash, src []byte, qualifier string) {
	type scanned struct {
		tok token.Token
		lit string
	}
	fset := token.NewFileSet()
	var sc scanner.Scanner
	sc.Init(fset.AddFile("", -1, len(src)), src, nil, 0)
	var toks []scanned
	for {
		_, tok, lit := sc.Scan()
		n := len(toks)
		if tok == token.PERIOD && n > 0 && qualifier != "" && toks[n-1].tok == token.IDENT && toks[n-1].lit == qualifier &&
			(n == 1 || toks[n-2].tok != token.PERIOD) {
			toks = toks[:n-1] // qualifier.X reads as X
			continue
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

// librarySource holds the package's Go files, for CodeVersion.
//
//go:embed *.go
var librarySource embed.FS

// CodeVersion is a hash of the library's own code: the tokens of every Go file of agentrl and gomlxmodel
// (embedded when the program is built), tests excluded. It is part of every cache key, so any edit of the
// library's code makes the results computed by the old code unusable, while an edit of its comments or layout
// keeps them.
func CodeVersion() string { return codeVersion() }

var codeVersion = sync.OnceValue(func() string {
	return libraryHash(map[string]fs.FS{"agentrl": librarySource, "gomlxmodel": gomlxmodel.Source()})
})

// libraryHash hashes the tokens of the Go files, tests excluded, of each named file system, in order of name.
func libraryHash(packages map[string]fs.FS) string {
	names := make([]string, 0, len(packages))
	for name := range packages {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, pkg := range names {
		files, err := fs.Glob(packages[pkg], "*.go")
		if err != nil {
			panic(err) // the pattern is valid
		}
		for _, file := range files { // sorted by fs.Glob
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := fs.ReadFile(packages[pkg], file)
			if err != nil {
				panic(fmt.Sprintf("agentrl: embedded %s/%s: %v", pkg, file, err)) // embedded files are readable
			}
			fmt.Fprintf(h, "%s/%s\x00", pkg, file)
			hashTokens(h, src)
			h.Write([]byte{0xff})
		}
	}
	return "agentrl-" + hex.EncodeToString(h.Sum(nil))[:16]
}
