package xlacache

import (
	"bytes"
	"slices"
)

// GoMLX names the graph of each new shape of an executor after the executor and the shape's place in the
// executor's cache ("decode_rows#24", which StableHLO writes "module @decode_rows_24"): the order in which one
// process met its shapes. The same program therefore arrives under another name in a process that met its shapes
// in another order, and keyed with its name it would be compiled again by every such process. The name is a
// label: nothing the plugin computes reads it. So the store keys, and the plugin compiles, each program under its
// canonical name, the executor's name without that number (canonicalCode), and a program is compiled once
// whatever the order of the shapes before it.

// canonicalCode returns the StableHLO text code with its module's name made canonical: a trailing "_N" (N
// decimal digits) removed. Code without a module name, or whose name has no such suffix, is returned as it is;
// otherwise the result is a new slice.
func canonicalCode(code []byte) []byte {
	head := code[:min(len(code), 512)]
	i := bytes.Index(head, []byte("module @"))
	if i < 0 {
		return code
	}
	start := i + len("module @")
	end := start
	for end < len(code) && code[end] != ' ' && code[end] != '{' && code[end] != '\n' {
		end++
	}
	digits := end
	for digits > start && code[digits-1] >= '0' && code[digits-1] <= '9' {
		digits--
	}
	if digits == end || digits-1 <= start || code[digits-1] != '_' {
		return code
	}
	return slices.Concat(code[:digits-1], code[end:])
}
