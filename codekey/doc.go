//codekey:reads the source on disk and the clock: the code it keys, and when the program started

// Package codekey names results by what computes them (KeyOf): the code of every package on disk that the
// computation can reach, found from the import graph (no list names them), with the Go version, the build settings
// that decide generated code and the modules' go.mod and go.sum; the numerics of the values it computes with
// (Numerical: an engine, a model, which describe their backend and processor); and the value of everything the computation is given, with the code of the
// types and functions a notebook cell or a test declares (Of). A stored result is found again only under the key
// of the same computation. A value whose inputs cannot be read off it is refused before anything runs, and what
// cell code reads that no key can hold is named (Keyed.Open), for a store to verify or recompute. The package
// imports nothing of the module it keys: it is given the values, and reads the code from disk.
package codekey
