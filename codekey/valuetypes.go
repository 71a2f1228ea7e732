package codekey

import (
	"go/ast"
	"path/filepath"
	"strings"
)

// Values without references. Assigning a variable whose type holds no reference (no pointer, slice, map, channel,
// function or interface, directly or in a field or an array's element) copies it: a write through the copy is not a
// write of the variable (cfg := base; cfg.MaxTurns = 3). Without the compiler's types, a type is read off the
// declarations on disk, and a type that cannot be read this way is taken to hold references.

// isCopy reports whether binding path (an access path of a variable) to another name copies the variable's value
// rather than sharing it: path is a top-level variable of s whose type holds no references.
func (s *source) isCopy(path ast.Expr) bool {
	id, ok := path.(*ast.Ident)
	if !ok || id.Obj == nil || !s.isTopLevel(id.Obj) {
		return false
	}
	vs, ok := id.Obj.Decl.(*ast.ValueSpec)
	if !ok {
		return false
	}
	t := vs.Type
	if t == nil {
		for k, n := range vs.Names {
			if n.Name == id.Name && k < len(vs.Values) && len(vs.Values) == len(vs.Names) {
				t = s.typeOfValue(vs.Values[k])
			}
		}
	}
	return t != nil && !s.holdsReferences(t, map[string]bool{})
}

// typeOfValue is the type expression of the value of x, in s, where it shows in the code: a composite literal's
// type, or the single result of the function literal or the function of s or of a package on disk that x calls.
func (s *source) typeOfValue(x ast.Expr) ast.Expr {
	switch x := ast.Unparen(x).(type) {
	case *ast.CompositeLit:
		return x.Type
	case *ast.CallExpr:
		switch f := ast.Unparen(x.Fun).(type) {
		case *ast.FuncLit:
			return singleResult(f.Type)
		case *ast.Ident:
			if f.Obj != nil {
				if fd, ok := f.Obj.Decl.(*ast.FuncDecl); ok && fd.Recv == nil {
					return singleResult(fd.Type)
				}
			}
		case *ast.SelectorExpr:
			if pkg, ok := f.X.(*ast.Ident); ok && pkg.Obj == nil {
				if lib, fd := s.libraryFunc(pkg.Name, f.Sel.Name); fd != nil {
					if r := singleResult(fd.Type); r != nil {
						return qualified(r, pkg.Name, lib)
					}
				}
			}
		}
	}
	return nil
}

// singleResult is the type of a function type's only result, or nil.
func singleResult(ft *ast.FuncType) ast.Expr {
	if ft.Results == nil || len(ft.Results.List) != 1 || len(ft.Results.List[0].Names) > 1 {
		return nil
	}
	return ft.Results.List[0].Type
}

// qualified is the type expression t of the library package imported as pkg, read in a file that imports it: an
// identifier of a type declared in the package becomes pkg.T.
func qualified(t ast.Expr, pkg string, lib *source) ast.Expr {
	if id, ok := t.(*ast.Ident); ok && len(lib.decls[id.Name]) > 0 {
		return &ast.SelectorExpr{X: ast.NewIdent(pkg), Sel: id}
	}
	return t
}

// holdsReferences reports whether values of the type expression t of s may share memory with their copies.
// seen guards against recursive types.
func (s *source) holdsReferences(t ast.Expr, seen map[string]bool) bool {
	switch t := ast.Unparen(t).(type) {
	case *ast.Ident:
		if isBasicType(t.Name) && t.Name != "any" && t.Name != "uintptr" {
			return false
		}
		return s.namedHolds(s, t.Name, seen)
	case *ast.SelectorExpr:
		pkg, ok := t.X.(*ast.Ident)
		if !ok {
			return true
		}
		lib, _ := s.libraryFunc(pkg.Name, "")
		if lib == nil {
			return true
		}
		return lib.namedHolds(lib, t.Sel.Name, seen)
	case *ast.StructType:
		for _, f := range t.Fields.List {
			if s.holdsReferences(f.Type, seen) {
				return true
			}
		}
		return false
	case *ast.ArrayType:
		return t.Len == nil || s.holdsReferences(t.Elt, seen)
	}
	return true // pointers, slices, maps, channels, functions, interfaces, and what cannot be read
}

// namedHolds reports whether the type name declared in in (a file of its package) holds references.
func (s *source) namedHolds(in *source, name string, seen map[string]bool) bool {
	key := in.name + "." + name
	if seen[key] {
		return false // a recursive type holds references only through what else it holds
	}
	seen[key] = true
	for _, d := range in.pkgDecls(name) {
		if ts, ok := d.node.(*ast.TypeSpec); ok && ts.Assign == 0 && ts.TypeParams == nil {
			return d.src.holdsReferences(ts.Type, seen)
		}
	}
	return true
}

// declIn is a declaration and the file it is in.
type declIn struct {
	node ast.Node
	src  *source
}

// pkgDecls are the declarations of name in s's file or, for a file of a package on disk, in every file of its
// package.
func (s *source) pkgDecls(name string) []declIn {
	var out []declIn
	for _, n := range s.decls[name] {
		out = append(out, declIn{n, s})
	}
	if len(out) > 0 || !filepath.IsAbs(s.name) {
		return out
	}
	if p, _ := placeOf(s.name); p != library {
		return out
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(s.name), "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == s.name {
			continue
		}
		if other, err := parseFile(f); err == nil {
			for _, n := range other.decls[name] {
				out = append(out, declIn{n, other})
			}
		}
	}
	return out
}

// libraryFunc finds the package on disk that s imports as pkg: a file of it, and the declaration of its top-level
// function fn ("": none wanted).
func (s *source) libraryFunc(pkg, fn string) (*source, *ast.FuncDecl) {
	path := s.importPath(pkg)
	if path == "" {
		return nil, nil
	}
	dir := resolve(path, moduleOf(filepath.Dir(s.name)))
	if dir == "" {
		return nil, nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var first *source
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		lib, err := parseFile(f)
		if err != nil {
			continue
		}
		if first == nil {
			first = lib
		}
		for _, n := range lib.decls[fn] {
			if fd, ok := n.(*ast.FuncDecl); ok && fd.Recv == nil && fn != "" {
				return lib, fd
			}
		}
	}
	return first, nil
}
