package codekey

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"reflect"
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
