package codekey

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"go/ast"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// Numerical is a value whose results depend on more than code and values: on the numerics it computes with (a
// backend, the processor its code is compiled for, flags read when it was made), which it describes in one line.
// A key holds the description of every Numerical value among its parts or reached through them, and reads
// nothing else of such a value but what it writes of itself (io.WriterTo: a model's weights).
type Numerical interface{ NumericsKey() string }

// numericsDirective marks a package whose results depend on the numerics of the values they are computed with:
// a key whose code reaches such a package and holds no Numerical value is refused. The directive is a line
// comment of its own above the package clause of one of the package's files.
const numericsDirective = "//codekey:numerics"

// declaresNumerics reports whether a file's comments hold the directive.
func declaresNumerics(comments []string) bool {
	for _, c := range comments {
		if strings.TrimSpace(c) == numericsDirective {
			return true
		}
	}
	return false
}

var (
	writerTo  = reflect.TypeFor[io.WriterTo]()
	numerical = reflect.TypeFor[Numerical]()
)

// described writes what a value that describes itself says of itself, and reports whether v is such a value: the
// numerics of a Numerical one (recorded for Keyed.Numerics), and the hash of what an io.WriterTo one writes (a
// model's weights). Nothing else of such a value is read.
func (w *walker) described(v reflect.Value, path string) (bool, error) {
	t := v.Type()
	if t.Kind() != reflect.Pointer || v.IsNil() || !v.CanInterface() {
		return false, nil
	}
	isNumerical, isWriter := t.Implements(numerical), t.Implements(writerTo)
	if isNumerical {
		d := v.Interface().(Numerical).NumericsKey()
		if w.found.numerics == nil {
			w.found.numerics = map[string]bool{}
		}
		w.found.numerics[d] = true
		w.str(d)
	}
	if isWriter {
		var buf bytes.Buffer
		if _, err := v.Interface().(io.WriterTo).WriteTo(&buf); err != nil {
			return true, fmt.Errorf("%s (%T): %w", path, v.Interface(), err)
		}
		sum := sha256.Sum256(buf.Bytes())
		w.h.Write(sum[:])
	}
	return isNumerical || isWriter, nil
}

// readsDirective, followed by what a package reads and why it does not decide the package's results, declares that
// the package's calls of readCalls are its own business (the store's files, the key library's source, the plugin's
// folder, which the numerics name). A key whose code reaches a package of the module that makes such calls and
// says neither this nor numericsDirective holds what the package reads among what no key can hold (Keyed.Open):
// its result is computed and not stored. The directive is a line comment of its own, as numericsDirective is.
const readsDirective = "//codekey:reads"

// readCalls are the calls by which code reads what its source does not show: the process's environment, files,
// the clock. (The key library reads cell code more closely: open.go.)
var readCalls = map[string][]string{
	"os":        {"Getenv", "LookupEnv", "Environ", "ReadFile", "Open", "OpenFile", "ReadDir", "DirFS"},
	"io/ioutil": {"ReadFile", "ReadDir"},
	"time":      {"Now"},
}

// surroundingsRead lists the calls of readCalls in f, as "os.Getenv".
func surroundingsRead(f *ast.File) []string {
	local := map[string]string{} // the name a file gives an import of readCalls → its path
	for _, im := range f.Imports {
		path, err := strconv.Unquote(im.Path.Value)
		if err != nil || readCalls[path] == nil {
			continue
		}
		name := path[strings.LastIndexByte(path, '/')+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		local[name] = path
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && local[x.Name] != "" {
			for _, fn := range readCalls[local[x.Name]] {
				if sel.Sel.Name == fn {
					found = append(found, local[x.Name]+"."+fn)
				}
			}
		}
		return true
	})
	return found
}

// readsOpen names, for each package in dirs that reads the process's surroundings (readCalls) and declares neither
// readsDirective nor numericsDirective, the package and its reads: what a key reaching it cannot hold.
func readsOpen(dirs []string) []string {
	var open []string
	for _, dir := range dirs {
		if p := packageCode(dir); p.err == nil && len(p.reads) > 0 && !p.numerics && !p.declared {
			open = append(open, moduleOf(dir).importPath(dir)+" ("+strings.Join(p.reads, ", ")+")")
		}
	}
	return open
}
