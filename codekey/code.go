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

// mutableGlobals names the top-level variables among decls whose value at run time may not be the one their
// declaration gives: a variable that some code of the file (any function, init functions and other variables'
// initializers included, and decls themselves) may change (writes). Each name comes with the line of the first
// such use and what it does.
func (s *source) mutableGlobals(decls []ast.Node) []string {
	var out []string
	for _, d := range decls {
		vs, ok := d.(*ast.ValueSpec)
		if !ok || s.kind[d] != token.VAR {
			continue
		}
		for _, n := range vs.Names {
			if n.Obj == nil || n.Name == "_" {
				continue
			}
			if why, at := s.writer(map[*ast.Object]bool{}).uses(n.Obj, s.file, vs); why != "" {
				out = append(out, fmt.Sprintf("%s (line %d: %s)", n.Name, s.fset.Position(at).Line, why))
			}
		}
	}
	sort.Strings(out)
	return out
}

// writer finds the uses of a variable that may change its value. A use writes when it assigns the variable or a
// part of it (x = …, x += …, x++, x[i] = …, x.f = …, *x = …, a range clause's x), takes its address (&x, &x.f),
// gives it (or a part) to a builtin that writes (copy, append, clear, delete), calls a pointer-receiver method of
// it, or gives it to a function whose code may change it: a function or value-receiver method of the file whose
// parameter or receiver it becomes is read by the same rules, and a function is read-only where it is a builtin
// that only reads (len, cap, min, max, …), a conversion, a function of this module's packages or a method of a type
// declared outside the file (the library's contract: it does not modify what it is given), or one of the standard
// library's read-only functions (fmt, strings, strconv, math, cmp, errors, and slices' and maps' that only read).
// Any other function, or one the file does not declare, writes.
type writer struct {
	s      *source
	active map[*ast.Object]bool // the parameters being read: a recursive call reads as a read
}

func (s *source) writer(active map[*ast.Object]bool) *writer { return &writer{s, active} }

// uses returns how some use of obj inside scope, outside the declaration decl, may change obj's value, and where;
// or "" when every use only reads it. A parameter or receiver (param) may be assigned as a whole: that changes its
// copy, not the caller's value.
func (w *writer) uses(obj *ast.Object, scope, decl ast.Node) (why string, at token.Pos) {
	if w.active[obj] {
		return "", token.NoPos
	}
	w.active[obj] = true
	defer delete(w.active, obj)
	_, param := obj.Decl.(*ast.Field)
	var stack []ast.Node
	ast.Inspect(scope, func(n ast.Node) bool {
		if why != "" {
			return false
		}
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		if n == decl {
			return false
		}
		stack = append(stack, n)
		if id, ok := n.(*ast.Ident); ok && id.Obj == obj {
			if why = w.writes(stack, param); why != "" {
				at = id.Pos()
			}
		}
		return true
	})
	return why, at
}

// writes says how the use of a variable at the top of stack (an identifier, its parents below it) may change the
// variable's value, or "" when it only reads it. A param's assignment as a whole changes only its own copy.
func (w *writer) writes(stack []ast.Node, param bool) string {
	// path is the access path rooted at the variable: x, x.f, x[i], x[i:j], *x, (x) and their compositions.
	i := len(stack) - 1
	path := stack[i].(ast.Expr)
	for ; i > 0; i-- {
		var x ast.Expr
		switch p := stack[i-1].(type) {
		case *ast.SelectorExpr:
			x = p.X
		case *ast.IndexExpr:
			x = p.X
		case *ast.IndexListExpr:
			x = p.X
		case *ast.SliceExpr:
			x = p.X
		case *ast.StarExpr:
			x = p.X
		case *ast.ParenExpr:
			x = p.X
		}
		if x == nil || x != path {
			break
		}
		path = stack[i-1].(ast.Expr)
	}
	if i == 0 {
		return ""
	}
	_, whole := path.(*ast.Ident)
	switch p := stack[i-1].(type) {
	case *ast.AssignStmt:
		if p.Tok == token.DEFINE || param && whole {
			return ""
		}
		for _, l := range p.Lhs {
			if l == path {
				return "assigned"
			}
		}
	case *ast.IncDecStmt:
		if !(param && whole) {
			return "assigned"
		}
	case *ast.RangeStmt:
		if p.Tok == token.ASSIGN && (p.Key == path || p.Value == path) && !(param && whole) {
			return "assigned by a range clause"
		}
	case *ast.UnaryExpr:
		if p.Op == token.AND {
			return "its address taken"
		}
	case *ast.CallExpr:
		if p.Fun == path {
			if sel, ok := path.(*ast.SelectorExpr); ok {
				return w.methodWrites(sel.Sel.Name, "called")
			}
			return ""
		}
		return w.callWrites(p, path)
	}
	return ""
}

// methodWrites says how calling the file's method name (or binding it, a method value) may change its receiver:
// a pointer receiver may; a value receiver is read by writer's rules. A method the file does not declare is of a
// type declared outside it.
func (w *writer) methodWrites(name, how string) string {
	for _, d := range w.s.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 || fd.Name.Name != name || fd.Body == nil {
			continue
		}
		recv := fd.Recv.List[0]
		if _, ok := recv.Type.(*ast.StarExpr); ok {
			return "its pointer-receiver method " + name + " " + how
		}
		if len(recv.Names) == 1 && recv.Names[0].Obj != nil {
			if why, _ := w.uses(recv.Names[0].Obj, fd.Body, nil); why != "" {
				return fmt.Sprintf("its method %s %s, whose receiver is %s", name, how, why)
			}
		}
	}
	return ""
}

// readOnlyBuiltins are the builtins that do not modify their arguments.
var readOnlyBuiltins = map[string]bool{"len": true, "cap": true, "min": true, "max": true, "real": true, "imag": true,
	"complex": true, "print": true, "println": true, "panic": true}

// readOnlyPackages are the standard library's packages none of whose functions modify their arguments' contents;
// readOnlyFuncs the read-only functions of slices and maps.
var (
	readOnlyPackages = map[string]bool{"fmt": true, "strings": true, "strconv": true, "math": true, "cmp": true,
		"errors": true, "unicode": true, "unicode/utf8": true}
	readOnlyFuncs = map[string]bool{"slices.Clone": true, "slices.Contains": true, "slices.ContainsFunc": true,
		"slices.Index": true, "slices.IndexFunc": true, "slices.Equal": true, "slices.EqualFunc": true,
		"slices.Max": true, "slices.Min": true, "slices.MaxFunc": true, "slices.MinFunc": true, "slices.All": true,
		"slices.Values": true, "slices.Backward": true, "slices.Sorted": true, "slices.IsSorted": true,
		"slices.Concat": true, "slices.BinarySearch": true, "maps.Clone": true, "maps.Keys": true,
		"maps.Values": true, "maps.All": true, "maps.Equal": true}
)

// callWrites says how giving path (a variable's access path) to the call c may change the variable, or "".
func (w *writer) callWrites(c *ast.CallExpr, path ast.Expr) string {
	s := w.s
	if sel, ok := path.(*ast.SelectorExpr); ok {
		if p, v := s.methods(sel.Sel.Name); p || v {
			return w.methodWrites(sel.Sel.Name, "bound") // a method value
		}
	}
	arg := -1
	for k, a := range c.Args {
		if a == path {
			arg = k
		}
	}
	switch f := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		if f.Obj == nil {
			if readOnlyBuiltins[f.Name] || isBasicType(f.Name) || f.Name == "append" && arg > 0 || f.Name == "copy" && arg == 1 {
				return "" // append copies what it appends, copy what it copies from
			}
			return "given to " + f.Name
		}
		switch d := f.Obj.Decl.(type) {
		case *ast.TypeSpec:
			return "" // a conversion
		case *ast.FuncDecl:
			if why := w.paramWrites(d, arg, len(c.Args)); why != "" {
				return "given to " + f.Name + ", where it is " + why
			}
			return ""
		}
		return "given to " + f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok && x.Obj == nil {
			if p := s.importPath(x.Name); p != "" {
				if strings.HasPrefix(p, modulePath+"/") || readOnlyPackages[p] || readOnlyFuncs[p+"."+f.Sel.Name] {
					return ""
				}
				return "given to " + x.Name + "." + f.Sel.Name
			}
		}
		for _, d := range s.file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && fd.Name.Name == f.Sel.Name {
				if why := w.paramWrites(fd, arg, len(c.Args)); why != "" {
					return "given to the method " + f.Sel.Name + ", where it is " + why
				}
			}
		}
		return "" // a method of a type declared outside the file
	case *ast.ArrayType, *ast.MapType, *ast.FuncType, *ast.InterfaceType, *ast.ChanType:
		return "" // a conversion
	}
	return "given to a function"
}

// paramWrites says how fd's code may change what it is given as argument arg of n: read by writer's rules as its
// parameter.
func (w *writer) paramWrites(fd *ast.FuncDecl, arg, n int) string {
	if fd.Body == nil || arg < 0 {
		return "given to code without a body"
	}
	var params []*ast.Ident
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			params = append(params, nil)
		}
		params = append(params, f.Names...)
	}
	if len(params) == 0 {
		return ""
	}
	p := params[min(arg, len(params)-1)] // a variadic parameter takes the rest
	if p == nil || p.Obj == nil || p.Name == "_" {
		return ""
	}
	why, _ := w.uses(p.Obj, fd.Body, nil)
	return why
}

// isBasicType reports whether name is a predeclared type (a conversion).
func isBasicType(name string) bool {
	switch name {
	case "bool", "string", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
		"uintptr", "float32", "float64", "complex64", "complex128", "byte", "rune", "any":
		return true
	}
	return false
}

// importPath is the path of the package the file imports under name, or "".
func (s *source) importPath(name string) string {
	for _, im := range s.file.Imports {
		p := strings.Trim(im.Path.Value, `"`)
		n := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			n = im.Name.Name
		}
		if n == name {
			return p
		}
	}
	return ""
}

// methods returns whether the file declares a method named name with a pointer receiver, and with a value one.
func (s *source) methods(name string) (pointer, value bool) {
	for _, d := range s.file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 || fd.Name.Name != name {
			continue
		}
		if _, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
			pointer = true
		} else {
			value = true
		}
	}
	return pointer, value
}
