package codekey

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strings"
)

// mutableGlobals names the top-level variables among decls whose value at run time may not be the one their
// declaration gives: a variable that some code of the file (any function, init functions and other variables'
// initializers included, and decls themselves) may change (writes). Each name comes with the line of the first
// such use and what it does.
func (s *source) mutableGlobals(decls []ast.Node, aliases bool) []string {
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
			w := s.writer(map[*ast.Object]bool{})
			w.aliases = aliases
			if why, at := w.uses(n.Obj, s.file, vs); why != "" {
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
	active map[*ast.Object]bool // the parameters, other names and functions being read: a recursive use reads
	copies map[*ast.Object]bool // the other names of a value (l := x): assigning one as a whole changes only it
	// the functions whose results are being followed to their calls: a recursive call reads
	returning map[*ast.FuncDecl]bool
	// aliases: follow the value to its other names (l := x, T{F: x}, return x) and take a write through one of them
	// for a write of the variable
	aliases bool
}

func (s *source) writer(active map[*ast.Object]bool) *writer {
	return &writer{s: s, active: active, copies: map[*ast.Object]bool{}, returning: map[*ast.FuncDecl]bool{}}
}

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
	param = param || w.copies[obj]
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
	path, i := accessPath(stack)
	if i == 0 {
		return ""
	}
	_, whole := path.(*ast.Ident)
	return w.useWrites(stack[:i], path, param && whole)
}

// accessPath is the access path rooted at the variable at the top of stack (x, x.f, x[i], x[i:j], *x, (x) and
// their compositions) and its index in stack: stack[i-1] is the node that uses it, if i > 0.
func accessPath(stack []ast.Node) (path ast.Expr, i int) {
	i = len(stack) - 1
	path = stack[i].(ast.Expr)
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
	return path, i
}

// useWrites says how the use of path by the node at the top of stack may change the variable; copy says that
// assigning path changes only a copy (a parameter's, another name's).
func (w *writer) useWrites(stack []ast.Node, path ast.Expr, copy bool) string {
	i := len(stack)
	switch p := stack[i-1].(type) {
	case *ast.AssignStmt:
		for _, l := range p.Lhs {
			if l == path {
				if p.Tok == token.DEFINE || copy {
					return ""
				}
				return "assigned"
			}
		}
		for k, r := range p.Rhs {
			if r == path && len(p.Lhs) == len(p.Rhs) {
				return w.boundWrites(path, p.Lhs[k], stack[:i])
			}
		}
	case *ast.ValueSpec:
		for k, v := range p.Values {
			if v == path && k < len(p.Names) {
				return w.boundWrites(path, p.Names[k], stack[:i])
			}
		}
	case *ast.IncDecStmt:
		if !copy {
			return "assigned"
		}
	case *ast.RangeStmt:
		if p.Tok == token.ASSIGN && (p.Key == path || p.Value == path) && !copy {
			return "assigned by a range clause"
		}
		if p.X == path && p.Value != nil { // the value variable is another name for each element
			return w.aliasWrites(p.Value, stack[:i])
		}
	case *ast.CompositeLit, *ast.KeyValueExpr: // the literal holds it: it goes where the literal goes
		if w.s.isCopy(path) {
			return "" // the literal holds a copy
		}
		for j := i - 1; j >= 0; j-- {
			if _, ok := stack[j].(*ast.CompositeLit); ok && stack[j] != path {
				return w.flow(stack[:j+1])
			}
		}
	case *ast.UnaryExpr:
		if p.Op == token.AND {
			if _, lit := path.(*ast.CompositeLit); lit {
				return w.flow(stack[:i]) // &T{…}: a pointer to a new value that holds it
			}
			return "its address taken"
		}
	case *ast.ReturnStmt:
		if w.s.isCopy(path) {
			return ""
		}
		return w.returnWrites(stack[:i])
	case *ast.SendStmt:
		if p.Value == path && w.aliases {
			return "sent on a channel"
		}
	case *ast.CallExpr:
		if p.Fun == path {
			if sel, ok := path.(*ast.SelectorExpr); ok {
				return w.methodWrites(sel.Sel.Name, "called")
			}
			return ""
		}
		if w.converts(p) {
			return w.flow(stack[:i]) // the conversion is the same value under another type
		}
		return w.callWrites(p, path)
	}
	return ""
}

// flow says how code may change a value held by the expression at the top of stack (a literal that holds it, a
// conversion of it) through what the expression becomes, when the writer follows aliases; otherwise "".
func (w *writer) flow(stack []ast.Node) string {
	if !w.aliases {
		return ""
	}
	return w.writes(stack, true)
}

// boundWrites says how code may change a value whose access path is bound to lhs by the statement at the top of
// stack: through a method of the file that path names (a method value), or through lhs (aliasWrites).
func (w *writer) boundWrites(path, lhs ast.Expr, stack []ast.Node) string {
	if sel, ok := path.(*ast.SelectorExpr); ok {
		if p, v := w.s.methods(sel.Sel.Name); p || v {
			return w.methodWrites(sel.Sel.Name, "bound")
		}
	}
	if w.s.isCopy(path) {
		return "" // lhs holds a copy
	}
	return w.aliasWrites(lhs, stack)
}

// aliasWrites says how code may change a value through lhs, which the statement at the top of stack makes another
// name for it (l := x, l = x[1:], var l = x, a range clause's value), or "". A name that is not a variable (m[k] = x,
// s.f = x) is taken to change it.
func (w *writer) aliasWrites(lhs ast.Expr, stack []ast.Node) string {
	if !w.aliases {
		return ""
	}
	id, ok := lhs.(*ast.Ident)
	if !ok {
		return "stored in another value"
	}
	if id.Name == "_" || id.Obj == nil {
		return ""
	}
	scope := ast.Node(w.s.file)
	if !w.s.isTopLevel(id.Obj) {
		for _, n := range stack { // the outermost function: a closure may change a local of the function around it
			if fd, ok := n.(*ast.FuncDecl); ok {
				scope = fd
				break
			}
		}
	}
	w.copies[id.Obj] = true
	why, at := w.uses(id.Obj, scope, nil)
	if why == "" {
		return ""
	}
	return fmt.Sprintf("%s, another name for it, at line %d: %s", id.Name, w.s.fset.Position(at).Line, why)
}

// returnWrites says how code may change a value that the return statement at the top of stack returns: through
// what every call of the function or method in the file does with its result (the library's calls keep its
// contract: they do not change what they are given).
func (w *writer) returnWrites(stack []ast.Node) string {
	if !w.aliases {
		return ""
	}
	var fd *ast.FuncDecl
	for j := len(stack) - 1; j >= 0 && fd == nil; j-- {
		if _, ok := stack[j].(*ast.FuncLit); ok {
			return "returned by a function literal"
		}
		fd, _ = stack[j].(*ast.FuncDecl)
	}
	if fd == nil || w.returning[fd] {
		return ""
	}
	w.returning[fd] = true
	defer delete(w.returning, fd)
	why := ""
	var calls []ast.Node
	ast.Inspect(w.s.file, func(n ast.Node) bool {
		if why != "" {
			return false
		}
		if n == nil {
			calls = calls[:len(calls)-1]
			return true
		}
		calls = append(calls, n)
		if c, ok := n.(*ast.CallExpr); ok && w.calls(c, fd) {
			if why = w.writes(calls, true); why != "" {
				why = fmt.Sprintf("returned by %s, whose result at line %d is %s", fd.Name.Name,
					w.s.fset.Position(c.Pos()).Line, why)
			}
		}
		return true
	})
	return why
}

// calls reports whether c may call fd: a call of the function by its name, or of a method with fd's name.
func (w *writer) calls(c *ast.CallExpr, fd *ast.FuncDecl) bool {
	switch f := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		return fd.Recv == nil && f.Obj != nil && f.Obj == fd.Name.Obj
	case *ast.SelectorExpr:
		return fd.Recv != nil && f.Sel.Name == fd.Name.Name
	}
	return false
}

// converts reports whether c converts its argument to a type that may share its contents (a named type, a slice,
// map, function or interface type): not to a predeclared type, which copies.
func (w *writer) converts(c *ast.CallExpr) bool {
	switch f := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		if f.Obj == nil {
			return false
		}
		_, typ := f.Obj.Decl.(*ast.TypeSpec)
		return typ
	case *ast.ArrayType, *ast.MapType, *ast.FuncType, *ast.InterfaceType, *ast.ChanType:
		return true
	}
	return false
}

// isTopLevel reports whether obj is declared at the top level of the file.
func (s *source) isTopLevel(obj *ast.Object) bool {
	n, ok := obj.Decl.(ast.Node)
	_, top := s.kind[n]
	return ok && top
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
		case *ast.FuncDecl:
			if s.isCopy(path) {
				return "" // the parameter is a copy
			}
			if why := w.paramWrites(d, arg, len(c.Args)); why != "" {
				return "given to " + f.Name + ", where it is " + why
			}
			return ""
		}
		return "given to " + f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok && x.Obj == nil {
			if p := s.importPath(x.Name); p != "" {
				if s.onDisk(p) || readOnlyPackages[p] || readOnlyFuncs[p+"."+f.Sel.Name] {
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
		n := importName(p)
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

// importName is the name a package of import path p is known by when imported without a name: its last element,
// or the one before a major version (math/rand/v2 is rand).
func importName(p string) string {
	elems := strings.Split(p, "/")
	n := elems[len(elems)-1]
	if len(elems) > 1 && len(n) > 1 && n[0] == 'v' && strings.Trim(n[1:], "0123456789") == "" {
		n = elems[len(elems)-2]
	}
	return n
}
