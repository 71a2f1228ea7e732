package codekey

import (
	"path/filepath"
	"runtime"
	"sort"
	"sync"
)

// numerics are the descriptions of the packages whose results depend on more than their code.
var numerics struct {
	sync.Mutex
	by map[string]func() (string, error) // a package's directory → its description
}

// Numerics declares that the results of the calling package depend on more than its code: on what describe
// returns (the backend it computes on, the processor its code is compiled for, flags read at run time). Call it
// from an init function. Every key whose code reaches the package holds the description, read when the key is made;
// a key whose description cannot be read is refused.
func Numerics(describe func() (string, error)) {
	_, file, _, ok := runtime.Caller(1)
	if !ok || describe == nil {
		panic("codekey: Numerics: no caller or no description")
	}
	numerics.Lock()
	defer numerics.Unlock()
	if numerics.by == nil {
		numerics.by = map[string]func() (string, error){}
	}
	numerics.by[filepath.Dir(file)] = describe
}

// numericsOf describes the numerics of the packages in dirs that declared theirs, in order of their directories.
func numericsOf(dirs []string) ([]string, error) {
	numerics.Lock()
	var found []string
	for _, dir := range dirs {
		if numerics.by[dir] != nil {
			found = append(found, dir)
		}
	}
	sort.Strings(found)
	describe := make([]func() (string, error), len(found))
	for i, dir := range found {
		describe[i] = numerics.by[dir]
	}
	numerics.Unlock()
	out := make([]string, len(describe))
	for i, f := range describe {
		d, err := f()
		if err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}
