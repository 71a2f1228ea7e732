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
	"math"
	"path"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// Key returns the content address of a result: a readable name followed by a hash of the library's code (Version),
// the numerics that compute it (gomlxmodel.Numerics: the backend and, on XLA, the processor), the name and the
// value of every part (Of). It fails, naming the part, where a part cannot be keyed.
func Key(name string, parts ...any) (string, error) {
	k, err := KeyOf(name, parts...)
	return k.Key, err
}

// Keyed is a result's key, and what of the code it holds comes from outside the library.
type Keyed struct {
	Key string
	// Outside names each type and function from outside the library (a notebook cell's) whose code the key holds,
	// in the order they were met; nil when the key holds only the library's code (Version). The key reads that
	// code as written; what it reads at run time beyond its code (a package variable, vetted by the rules Of
	// states) a store verifies before it serves a result computed by it.
	Outside []string
}

// KeyOf is Key, saying also which code from outside the library the key holds.
func KeyOf(name string, parts ...any) (Keyed, error) {
	numerics, err := gomlxmodel.Numerics()
	if err != nil {
		numerics = "unavailable"
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", Version(), numerics, name)
	var outside []string
	w := &walker{h: h, seen: map[uintptr]bool{}, foreign: &outside}
	for i, p := range parts {
		if err := w.any(p, fmt.Sprintf("part %d", i)); err != nil {
			return Keyed{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	safe := []byte(name)
	for i, c := range safe {
		if !(c == '-' || c == '_' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			safe[i] = '_'
		}
	}
	return Keyed{Key: fmt.Sprintf("%s-%s", safe, hex.EncodeToString(h.Sum(nil))[:20]), Outside: outside}, nil
}

// Of returns a short hash of everything that determines what v computes, read off v itself: its type's name, the
// value of every field, element and entry (unexported ones too, maps in order of their keys), the dynamic type and
// value behind every interface, for a value that writes itself (io.WriterTo: a model, a critic) what it writes,
// and the code of its types and functions:
//
//   - a type or function of the library (agentrl, gomlxmodel) by its name: Version holds its code;
//   - a type declared elsewhere (a notebook cell's) by the code of its declaration, its methods and every
//     top-level declaration they reach (comments, layout and local names aside), or as the library's where that
//     code is, token for token, a copy of the library's (a notebook's #@save code);
//   - a top-level function by the code of its declaration and everything it reaches; a function literal by its own
//     code and everything it reaches (two literals in one function are two codes).
//
// Code outside the library that reads a package variable is refused unless nothing in its file can change the
// variable after its declaration (mutableGlobals): its value is then the one its declaration, which the key holds,
// gives.
//
// A value Of cannot see through is refused with an error that says how to make it keyable: a function literal
// that captures anything declared in a function around it (a parameter, a local, a loop variable: its value is not
// in the literal's code), a literal that shares its first line with another (the runtime does not say which one it
// is), a method value (its receiver is not in its code), a channel, an unsafe pointer, a cyclic value.
func Of(v any) (string, error) {
	h := sha256.New()
	if err := (&walker{h: h, seen: map[uintptr]bool{}, foreign: new([]string)}).any(v, "value"); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// walker writes values to h.
type walker struct {
	h       io.Writer
	seen    map[uintptr]bool // the pointers on the path from the root: a cycle is refused
	foreign *[]string        // the code from outside the library written so far (Keyed.Outside)
}

// outside records that the walker wrote the code of what from outside the library.
func (w *walker) outside(what string) {
	if !slices.Contains(*w.foreign, what) {
		*w.foreign = append(*w.foreign, what)
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

var writerTo = reflect.TypeFor[io.WriterTo]()

func (w *walker) value(v reflect.Value, path string) error {
	t := v.Type()
	if err := w.typ(t, path); err != nil {
		return err
	}
	if v.CanAddr() && !v.CanInterface() {
		v = reflect.NewAt(t, unsafe.Pointer(v.UnsafeAddr())).Elem() // an unexported field, read as a value
	}
	if t.Kind() == reflect.Pointer && !v.IsNil() && t.Implements(writerTo) && v.CanInterface() {
		var buf bytes.Buffer
		if _, err := v.Interface().(io.WriterTo).WriteTo(&buf); err != nil {
			return fmt.Errorf("%s (%s): %w", path, t, err)
		}
		sum := sha256.Sum256(buf.Bytes())
		w.h.Write(sum[:])
		return nil
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
		if err := (&walker{h: &kb, seen: w.seen, foreign: w.foreign}).value(copyOf(iter.Key()), kp); err != nil {
			return err
		}
		if err := (&walker{h: &vb, seen: w.seen, foreign: w.foreign}).value(copyOf(iter.Value()), kp); err != nil {
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

// typ writes a type's name and, for a named type outside the library and the standard library, its code.
func (w *walker) typ(t reflect.Type, path string) error {
	if t.Name() == "" || t.PkgPath() == "" {
		w.str(t.String())
		return nil
	}
	name, code, err := typeCode(t)
	if err != nil {
		return fmt.Errorf("%s (%s): %w", path, t, err)
	}
	if code != "" {
		w.outside(name)
	}
	w.str(name)
	w.str(code)
	return nil
}

// typeCode is the name under which Of writes a named type and the hash of its code ("" for a type of the library
// or the standard library, or one without methods, whose structure is all there is to it).
func typeCode(t reflect.Type) (name, code string, err error) {
	name = t.PkgPath() + "." + t.Name()
	file, line := methodSource(t)
	if file == "" || libraryPackage(file) != "" || !strings.Contains(t.PkgPath(), ".") && t.PkgPath() != "main" {
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
	if s.showsLibrary(reached) {
		return agentrlPath + "." + t.Name(), "", nil
	}
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

// agentrlPath is the import path of agentrl, whose code a notebook's copy of the library's code keys as.
var agentrlPath = reflect.TypeFor[agentrl.Run]().PkgPath()

// modulePath is the import path of this module, whose packages' functions do not modify their arguments
// (mutableGlobals).
var modulePath = path.Dir(agentrlPath)

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
	s, err := sourceOf(file)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", path, name, err)
	}
	if libraryPackage(file) != "" { // Version holds its code; the runtime's name says which function it is
		if literal.MatchString(name) {
			for _, lit := range s.literalsAt(line) {
				if captured := s.captures(lit); len(captured) > 0 {
					return fmt.Errorf("%s: the library's function literal %s captures %s, whose values are not in "+
						"its code: pass a value of the library's that holds them", path, name, strings.Join(captured, ", "))
				}
			}
		}
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
	if lit == nil && s.showsLibrary(reached) {
		w.str(agentrlPath + "." + s.nameOf(roots[0])) // as the runtime names the library's function
		return nil
	}
	where := s.nameOf(roots[0])
	if lit != nil {
		where = fmt.Sprintf("the function literal at %s:%d", shortFile(s.name), line)
	}
	w.outside(where)
	w.str(s.hash(roots))
	return nil
}

// readsMutable refuses code (the declarations reached) that reads a package variable whose value other code may
// change (mutableGlobals): its value at run time need not be the one its declaration gives, which is what the key
// holds.
func (s *source) readsMutable(reached []ast.Node) error {
	if names := s.mutableGlobals(reached); len(names) > 0 {
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
