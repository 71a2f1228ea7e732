package codekey

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/token"
	"io"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// Key returns the content address of a result: a readable name followed by a hash of its code, its numerics and
// the name and value of every part (KeyOf). It fails, naming the part, where a part cannot be keyed.
func Key(name string, parts ...any) (string, error) {
	k, err := KeyOf(name, parts...)
	return k.Key, err
}

// Keyed is a result's key and what it holds.
type Keyed struct {
	Key  string // the content address: Name, then a hash of everything below and of the parts' values
	Name string
	// Code is a digest of the code of the packages on disk that the key holds: the package that made the key, the
	// packages of its parts' types and functions, and every package on disk they import (with the Go version, the
	// build settings that decide generated code and the modules' go.mod and go.sum).
	Code string
	// Numerics describes what besides code decides the result's bits: the descriptions of the Numerical values
	// among the parts (an engine, a model), sorted, joined by " | "; Packages are the import paths of the packages
	// the code reaches.
	Numerics string
	Packages []string
	// Outside names each type and function from outside the packages on disk (a notebook cell's, a test's) whose
	// code the key holds, in the order they were met; nil when there is none. The key reads that code as written.
	Outside []string
	// Open names what that outside code reads that no key can hold (an environment variable, a file, the clock: a
	// function of the standard library outside those that compute from their arguments alone); nil when there is
	// none. A store verifies a result with Open code before it serves it, or computes it again.
	Open []string
	// InProgram is the key of the result as this program computes it now, for a result whose key holds outside
	// code and that a store cannot verify (no first step to compute again): Key, the code of the program around
	// that code (its main and init functions and package variables, with everything they reach: all the code
	// that can change, before the result is computed, what the outside code reads), and how many times this
	// process asked for Key with that code before. "" when the key holds no outside code, or when the program's
	// code reads what no key can hold (ProgramOpen names it).
	InProgram   string
	ProgramOpen []string
}

// KeyOf returns the key of a result that the calling package computes from parts. The key holds the code of the
// calling package, of the packages of the parts' types and functions, and of everything they import (Keyed.Code),
// the numerics of the Numerical values among the parts (Numerical: a key whose code reaches a package that declares
// its results depend on numerics and holds none is refused), name, and the value of every part (Of).
func KeyOf(name string, parts ...any) (Keyed, error) {
	f := &found{roots: map[string]bool{}}
	if dir := callerDir(); dir != "" {
		f.roots[dir] = true
	}
	parth := sha256.New()
	w := &walker{h: parth, seen: map[uintptr]bool{}, found: f}
	for i, p := range parts {
		if err := w.any(p, fmt.Sprintf("part %d", i)); err != nil {
			return Keyed{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	program, programOpen := f.program()
	roots := make([]string, 0, len(f.roots))
	for dir := range f.roots {
		roots = append(roots, dir)
	}
	sort.Strings(roots)
	code, pkgs, dirs, err := codeOf(roots)
	if err != nil {
		return Keyed{}, fmt.Errorf("%s: %w", name, err)
	}
	described := slices.Sorted(maps.Keys(f.numerics))
	if len(described) == 0 {
		for _, dir := range dirs {
			if packageCode(dir).numerics {
				return Keyed{}, fmt.Errorf("%s: the code reaches %s, whose results depend on the numerics they are computed with, and no part says which: give the engine (or a model) among the parts", name, moduleOf(dir).importPath(dir))
			}
		}
	}
	num := strings.Join(described, " | ")
	f.open = append(f.open, readsOpen(dirs)...)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", code, num, name)
	h.Write(parth.Sum(nil))
	safe := []byte(name)
	for i, c := range safe {
		if !(c == '-' || c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			safe[i] = '_'
		}
	}
	k := Keyed{Key: fmt.Sprintf("%s-%s", safe, hex.EncodeToString(h.Sum(nil))[:20]), Name: name, Code: code,
		Numerics: num, Packages: pkgs, Outside: f.outside, Open: f.open, ProgramOpen: programOpen}
	if program != "" && len(programOpen) == 0 {
		k.InProgram = inProgram(k.Key, program)
	}
	return k, nil
}

// callerDir is the directory of the package on disk whose code called into this package, or "" when that code is
// outside the packages on disk (a test's, a main package's).
func callerDir() string {
	pcs := make([]uintptr, 16)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	own := ownDir()
	for {
		fr, more := frames.Next()
		if filepath.Dir(fr.File) != own {
			if p, dir := placeOf(fr.File); p == library {
				return dir
			}
			return ""
		}
		if !more {
			return ""
		}
	}
}

// ownDir is this package's directory, as the runtime names its files.
var ownDir = sync.OnceValue(func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
})

// Of returns a short hash of everything that determines what v computes, read off v itself: its type's name, the
// value of every field, element and entry (unexported ones too, maps in order of their keys), the dynamic type and
// value behind every interface, for a value that writes itself (io.WriterTo: a model, a critic) what it writes,
// and the code of its types and functions:
//
//   - a type or function of a package on disk by its name: KeyOf holds its package's code;
//   - a type declared outside those packages (a notebook cell's, a test's) by the code of its declaration, its
//     methods and every top-level declaration they reach (comments, layout and local names aside), or as a
//     package's where that code is, token for token, a copy of the package's (a notebook's #@save code);
//   - a top-level function by the code of its declaration and everything it reaches; a function literal by its own
//     code and everything it reaches (two literals in one function are two codes).
//
// Code outside the packages on disk that reads a package variable is refused unless nothing in its file can change
// the variable after its declaration, directly or through another name for it (mutableGlobals): its value is then
// the one its declaration, which the key holds, gives.
//
// A value Of cannot see through is refused with an error that says how to make it keyable: a function literal
// that captures anything declared in a function around it (a parameter, a local, a loop variable: its value is not
// in the literal's code), a literal that shares its first line with another (the runtime does not say which one it
// is), a method value (its receiver is not in its code), a channel, an unsafe pointer, a cyclic value.
func Of(v any) (string, error) {
	h := sha256.New()
	if err := (&walker{h: h, seen: map[uintptr]bool{}, found: &found{roots: map[string]bool{}}}).any(v, "value"); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// walker writes values to h.
type walker struct {
	h     io.Writer
	seen  map[uintptr]bool // the pointers on the path from the root: a cycle is refused
	found *found
}

// found is what a walk found besides the values: the code it reaches.
type found struct {
	roots    map[string]bool // the directories of the packages on disk whose code the values name
	numerics map[string]bool // the descriptions of the Numerical values found
	outside  []string        // Keyed.Outside
	open     []string        // Keyed.Open
	sources  []*source       // the files of the outside code
}

// outsideCode records that the walker wrote the code of what from outside the packages on disk, declared in s,
// which reads open.
func (w *walker) outsideCode(s *source, what string, open []string) {
	if !slices.Contains(w.found.sources, s) {
		w.found.sources = append(w.found.sources, s)
	}
	if !slices.Contains(w.found.outside, what) {
		w.found.outside = append(w.found.outside, what)
	}
	for _, o := range open {
		if !slices.Contains(w.found.open, o) {
			w.found.open = append(w.found.open, o)
		}
	}
}

func (w *walker) str(s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	w.h.Write(n[:])
	w.h.Write([]byte(s))
}

func (w *walker) u64(x uint64) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], x)
	w.h.Write(n[:])
}

// any writes v, which may be nil.
func (w *walker) any(v any, path string) error {
	if v == nil {
		w.str("nil")
		return nil
	}
	rv := reflect.New(reflect.TypeOf(v)).Elem() // addressable, so unexported fields can be read
	rv.Set(reflect.ValueOf(v))
	return w.value(rv, path)
}

func (w *walker) value(v reflect.Value, path string) error {
	t := v.Type()
	if err := w.typ(t, path); err != nil {
		return err
	}
	if v.CanAddr() && !v.CanInterface() {
		v = reflect.NewAt(t, unsafe.Pointer(v.UnsafeAddr())).Elem() // an unexported field, read as a value
	}
	if described, err := w.described(v, path); described {
		return err
	}
	switch t.Kind() {
	case reflect.Bool:
		if v.Bool() {
			w.u64(1)
		} else {
			w.u64(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.u64(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.u64(v.Uint())
	case reflect.Float32, reflect.Float64:
		w.u64(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		w.u64(math.Float64bits(real(v.Complex())))
		w.u64(math.Float64bits(imag(v.Complex())))
	case reflect.String:
		w.str(v.String())
	case reflect.Slice:
		if v.IsNil() {
			w.str("nil")
			return nil
		}
		fallthrough
	case reflect.Array:
		w.u64(uint64(v.Len()))
		for i := range v.Len() {
			if err := w.value(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		return w.mapValue(v, path)
	case reflect.Struct:
		for i := range t.NumField() {
			w.str(t.Field(i).Name)
			if err := w.value(v.Field(i), path+"."+t.Field(i).Name); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			w.str("nil")
			return nil
		}
		p := v.Pointer()
		if w.seen[p] {
			return fmt.Errorf("%s: the value refers to itself: a cyclic value cannot be keyed", path)
		}
		w.seen[p] = true
		defer delete(w.seen, p)
		return w.value(v.Elem(), path)
	case reflect.Interface:
		if v.IsNil() {
			w.str("nil")
			return nil
		}
		return w.value(v.Elem(), path)
	case reflect.Func:
		return w.fn(v, path)
	default: // channels, unsafe pointers, uintptr
		return fmt.Errorf("%s: a %s cannot be keyed: pass the values it stands for", path, t.Kind())
	}
	return nil
}

// mapValue writes a map's entries in order of their keys' encodings.
func (w *walker) mapValue(v reflect.Value, path string) error {
	if v.IsNil() {
		w.str("nil")
		return nil
	}
	type entry struct{ key, val []byte }
	var entries []entry
	iter := v.MapRange()
	for iter.Next() {
		var kb, vb bytes.Buffer
		kp := fmt.Sprintf("%s[%v]", path, iter.Key())
		if err := (&walker{h: &kb, seen: w.seen, found: w.found}).value(copyOf(iter.Key()), kp); err != nil {
			return err
		}
		if err := (&walker{h: &vb, seen: w.seen, found: w.found}).value(copyOf(iter.Value()), kp); err != nil {
			return err
		}
		entries = append(entries, entry{kb.Bytes(), vb.Bytes()})
	}
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].key, entries[j].key) < 0 })
	w.u64(uint64(len(entries)))
	for _, e := range entries {
		w.h.Write(e.key)
		w.h.Write(e.val)
	}
	return nil
}

// copyOf returns an addressable copy of v.
func copyOf(v reflect.Value) reflect.Value {
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

// typ writes a type's name and, for a named type declared outside the packages on disk, its code; it records the
// package on disk of a named type declared there.
func (w *walker) typ(t reflect.Type, path string) error {
	if t.Name() == "" || t.PkgPath() == "" {
		w.str(t.String())
		return nil
	}
	name, code, err := w.typeCode(t)
	if err != nil {
		return fmt.Errorf("%s (%s): %w", path, t, err)
	}
	w.str(name)
	w.str(code)
	return nil
}

// typeCode is the name under which Of writes a named type and the hash of its code: "" for a type of a package on
// disk (whose package's code the key holds), of the standard library or the module cache, or one without methods
// whose declaration cannot be found (whose structure is all there is to it). A type whose methods are all
// unexported has none the runtime lists: its declaration is looked for in the files of the code that called the
// key (a cell's main.go, a test's file).
func (w *walker) typeCode(t reflect.Type) (name, code string, err error) {
	name = t.PkgPath() + "." + t.Name()
	file, line := methodSource(t)
	if file == "" {
		file = declaringFile(t)
	}
	if file == "" {
		if dir := resolve(t.PkgPath(), nil); dir != "" {
			w.found.roots[dir] = true
		}
		return name, "", nil
	}
	p, dir := placeOf(file)
	switch p {
	case library:
		w.found.roots[dir] = true
		return name, "", nil
	case pinned:
		return name, "", nil
	}
	s, err := sourceOf(file)
	if err != nil {
		return "", "", err
	}
	decls := s.decls[baseName(t.Name())]
	if len(decls) == 0 {
		decls = s.declsAt(line)
	}
	if len(decls) == 0 {
		return "", "", fmt.Errorf("no declaration of %s in %s", t.Name(), file)
	}
	reached := s.reach(decls)
	if err := s.readsMutable(reached); err != nil {
		return "", "", err
	}
	if dir, path := s.showsLibrary(reached); dir != "" {
		w.found.roots[dir] = true
		return path + "." + t.Name(), "", nil
	}
	for _, d := range s.importedDirs(reached) {
		w.found.roots[d] = true
	}
	w.outsideCode(s, name, s.opens(reached))
	return name, s.hash(decls), nil
}

// baseName is a generic type's name without its type arguments.
func baseName(name string) string {
	if i := strings.IndexByte(name, '['); i >= 0 {
		return name[:i]
	}
	return name
}

// methodSource is the source file and line of one of t's methods (on t or *t), or "" when it has none the runtime
// lists.
func methodSource(t reflect.Type) (string, int) {
	for _, mt := range []reflect.Type{t, reflect.PointerTo(t)} {
		for i := range mt.NumMethod() {
			m := mt.Method(i)
			if !m.Func.IsValid() {
				continue
			}
			fn := runtime.FuncForPC(m.Func.Pointer())
			if fn == nil {
				continue
			}
			file, line := fn.FileLine(fn.Entry())
			if strings.HasSuffix(file, ".go") && !strings.HasSuffix(file, "<autogenerated>") {
				return file, line
			}
		}
	}
	return "", 0
}

// literal matches the runtime's name of a function literal (pkg.F.func1, pkg.F.func1.2, pkg.glob..func1).
var literal = regexp.MustCompile(`\.func\d+(\.\d+)*$`)

// fn writes a function value.
func (w *walker) fn(v reflect.Value, path string) error {
	if v.IsNil() {
		w.str("nil func")
		return nil
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return fmt.Errorf("%s: the function is unknown to the runtime", path)
	}
	name := f.Name()
	file, line := f.FileLine(f.Entry())
	switch {
	case strings.HasSuffix(name, "-fm"):
		return fmt.Errorf("%s: %s is a method value, whose receiver is not in its code: pass the value itself "+
			"(a type with that method)", path, strings.TrimSuffix(name, "-fm"))
	case !strings.HasSuffix(file, ".go"):
		return fmt.Errorf("%s: %s has no Go source (%s): pass a function declared in Go", path, name, file)
	}
	p, dir := placeOf(file)
	if p == pinned {
		w.str(name)
		return nil
	}
	s, err := sourceOf(file)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", path, name, err)
	}
	if p == library { // its package's code is in the key; the runtime's name says which function it is
		if literal.MatchString(name) {
			for _, lit := range s.literalsAt(line) {
				if captured := s.captures(lit); len(captured) > 0 {
					return fmt.Errorf("%s: the library's function literal %s captures %s, whose values are not in "+
						"its code: pass a value of the library's that holds them", path, name, strings.Join(captured, ", "))
				}
			}
		}
		w.found.roots[dir] = true
		w.str(name)
		return nil
	}
	roots, lit, err := s.funcRoots(name, line)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	reached := s.reach(roots)
	if err := s.readsMutable(reached); err != nil {
		return fmt.Errorf("%s: %s: %w", path, name, err)
	}
	if lit == nil {
		if dir, pkg := s.showsLibrary(reached); dir != "" {
			w.found.roots[dir] = true
			w.str(pkg + "." + s.nameOf(roots[0])) // as the runtime names the library's function
			return nil
		}
	}
	where := s.nameOf(roots[0])
	if lit != nil {
		where = fmt.Sprintf("the function literal at %s:%d", shortFile(s.name), line)
	}
	for _, d := range s.importedDirs(reached) {
		w.found.roots[d] = true
	}
	w.outsideCode(s, where, s.opens(reached))
	w.str(s.hash(roots))
	return nil
}

// readsMutable refuses code (the declarations reached) that reads a package variable whose value other code may
// change (mutableGlobals): its value at run time need not be the one its declaration gives, which is what the key
// holds.
func (s *source) readsMutable(reached []ast.Node) error {
	if names := s.mutableGlobals(reached, false); len(names) > 0 {
		return fmt.Errorf("the code reads the package variables %s, whose values code other than their "+
			"declarations may change: declare each once with its value and only read it, or make it a field of the "+
			"value the run is given", strings.Join(names, ", "))
	}
	return nil
}

// shortFile is the file's last two path elements.
func shortFile(file string) string {
	parts := strings.Split(file, "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, "/")
}

// funcRoots returns the code of the function the runtime names name, whose code starts at line: a function
// literal's own (lit), or the top-level declarations at line. It refuses a literal that captures anything declared
// in a function around it, and one that shares its first line with another.
func (s *source) funcRoots(name string, line int) (roots []ast.Node, lit *ast.FuncLit, err error) {
	if !literal.MatchString(name) {
		if roots = s.declsAt(line); len(roots) == 0 {
			return nil, nil, fmt.Errorf("%s: no top-level declaration at %s:%d", name, s.name, line)
		}
		return roots, nil, nil
	}
	lits := s.literalsAt(line)
	if len(lits) != 1 {
		return nil, nil, fmt.Errorf("%d function literals start at %s:%d, and the runtime does not say which one "+
			"this is: put the one you pass on a line of its own", len(lits), shortFile(s.name), line)
	}
	if captured := s.captures(lits[0]); len(captured) > 0 {
		return nil, nil, fmt.Errorf("the function literal at %s:%d captures %s, whose values are not in its code: "+
			"make it a value the key can read (a struct type with a field for each, and a method that does the work)",
			shortFile(s.name), line, strings.Join(captured, ", "))
	}
	return []ast.Node{lits[0]}, lits[0], nil
}

// literalsAt returns the function literals that start at line.
func (s *source) literalsAt(line int) []*ast.FuncLit {
	var lits []*ast.FuncLit
	ast.Inspect(s.file, func(n ast.Node) bool {
		if fl, ok := n.(*ast.FuncLit); ok && s.fset.Position(fl.Pos()).Line == line {
			lits = append(lits, fl)
		}
		return true
	})
	return lits
}

// captures names the variables that the function literal fl captures: every name declared outside fl but inside a
// function (a parameter, a receiver, a local variable, constant or type, a loop variable). Its value when fl runs
// is not in fl's code, whatever computed it.
func (s *source) captures(fl *ast.FuncLit) []string {
	seen := map[string]bool{}
	var names []string
	ast.Inspect(fl.Body, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || id.Obj == nil || id.Obj.Kind == ast.Lbl || !s.isLocal(id) || seen[id.Name] {
			return true
		}
		if p := declPos(id.Obj); !p.IsValid() || fl.Pos() <= p && p < fl.End() {
			return true // declared inside the literal
		}
		seen[id.Name] = true
		names = append(names, id.Name)
		return true
	})
	sort.Strings(names)
	return names
}

// declPos is where obj is declared.
func declPos(obj *ast.Object) token.Pos {
	if n, ok := obj.Decl.(ast.Node); ok {
		return n.Pos()
	}
	return token.NoPos
}
