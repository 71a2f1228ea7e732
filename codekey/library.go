package codekey

import (
	"fmt"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// place says how a key holds the code of a source file.
type place int

const (
	// outside: a main package's (a notebook's cell program, a command) or a test's code, keyed by its code and what
	// it reaches in its file (Of).
	outside place = iota
	// library: a package on disk, keyed by its name and its package's code (codeOf).
	library
	// pinned: the standard library's or the module cache's, keyed by its name (the Go version, go.mod and go.sum).
	pinned
)

// placeOf says how a key holds the code of file, as the runtime names a function's source file, and for a library
// file the directory of its package.
func placeOf(file string) (place, string) {
	if strings.HasSuffix(file, "_test.go") {
		return outside, ""
	}
	dir := filepath.Dir(file)
	if moduleOf(dir) == nil {
		return pinned, ""
	}
	if packageName(file) == "main" {
		return outside, ""
	}
	return library, dir
}

var packageNames sync.Map // a file → the name its package clause gives ("" where it cannot be read)

// packageName is the name in file's package clause, or "".
func packageName(file string) string {
	if name, ok := packageNames.Load(file); ok {
		return name.(string)
	}
	name := ""
	if f, err := goparser.ParseFile(token.NewFileSet(), file, nil, goparser.PackageClauseOnly); err == nil {
		name = f.Name.Name
	}
	packageNames.Store(file, name)
	return name
}

// sourceOf parses the file that holds code the runtime places in file.
func sourceOf(file string) (*source, error) {
	if !strings.HasSuffix(file, ".go") {
		return nil, fmt.Errorf("%s is not a Go source file", file)
	}
	s, err := parseFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w (a key reads the source of the code it holds: a program built with -trimpath "+
			"has none)", err)
	}
	return s, nil
}

// resolve is the directory on disk of the package importPath, imported by code of the module from (nil: any): in
// from, or in another module this process found on disk. It is "" for a package of the standard library or the
// module cache.
func resolve(importPath string, from *module) string {
	if from != nil {
		if d := from.dirOf(importPath); d != "" && isDir(d) {
			return d
		}
	}
	moduleOf(ownDir()) // the module that holds this package is known from the start
	modulesMu.Lock()
	defer modulesMu.Unlock()
	best := ""
	for _, m := range modules {
		if m == nil {
			continue
		}
		if d := m.dirOf(importPath); d != "" && len(d) > len(best) && isDir(d) {
			best = d
		}
	}
	return best
}

// isDir reports whether dir is a directory.
func isDir(dir string) bool {
	st, err := os.Stat(dir)
	return err == nil && st.IsDir()
}

var libraryDecls sync.Map // a package's directory → map[name]map[declaration hash]bool

// declsOf maps each top-level name of the package in dir (tests excluded) to the hashes of its declarations.
func declsOf(dir string) (map[string]map[string]bool, error) {
	if d, ok := libraryDecls.Load(dir); ok {
		return d.(map[string]map[string]bool), nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	decls := map[string]map[string]bool{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		s, err := parseFile(file)
		if err != nil {
			return nil, err
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
	libraryDecls.Store(dir, decls)
	return decls, nil
}

// showsLibrary returns the directory and import path of a package on disk, imported by s, of which every
// declaration of decls is, token for token, a declaration with the same name, read with the package's qualifier
// removed: a notebook's copy of the library's #@save code. It returns "" when there is none.
func (s *source) showsLibrary(decls []ast.Node) (dir, importPath string) {
	from := moduleOf(filepath.Dir(s.name))
	for _, im := range s.file.Imports {
		path, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		d := resolve(path, from)
		if d == "" {
			continue
		}
		qualifier := importName(path)
		if im.Name != nil {
			qualifier = im.Name.Name
		}
		lib, err := declsOf(d)
		if err != nil {
			continue
		}
		all := true
		for _, decl := range decls {
			name := s.nameOf(decl)
			if name == "" || !lib[name][s.declHash(decl, qualifier)] {
				all = false
				break
			}
		}
		if all {
			return d, path
		}
	}
	return "", ""
}

// importedDirs are the directories on disk of the packages that the declarations decls of s name through an
// import (pkg.X): the library code that s's code reaches.
func (s *source) importedDirs(decls []ast.Node) []string {
	names := map[string]bool{}
	for _, d := range decls {
		ast.Inspect(d, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Obj == nil {
					names[x.Name] = true
				}
			}
			return true
		})
	}
	from := moduleOf(filepath.Dir(s.name))
	var dirs []string
	for name := range names {
		if path := s.importPath(name); path != "" {
			if d := resolve(path, from); d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// declaringFile is the file of the calling code that declares the named type t, or "": the runtime lists no
// unexported method, so a type of a cell or a test whose methods are all unexported is found from the call stack,
// in the files of the functions of t's package that called into this package (GoNB puts a cell program's code in
// one file).
func declaringFile(t reflect.Type) string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		fr, more := frames.Next()
		if funcPackage(fr.Function) == t.PkgPath() && strings.HasSuffix(fr.File, ".go") {
			if s, err := sourceOf(fr.File); err == nil && len(s.decls[baseName(t.Name())]) > 0 {
				return fr.File
			}
		}
		if !more {
			return ""
		}
	}
}

// funcPackage is the import path of the package of a function the runtime names ("main.main",
// "example.com/m/p.(*T).M", "example.com/m/p_test.TestX.func1").
func funcPackage(function string) string {
	slash := strings.LastIndexByte(function, '/')
	dot := strings.IndexByte(function[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return function[:slash+1+dot]
}
