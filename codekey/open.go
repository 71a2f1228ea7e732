package codekey

import (
	"go/ast"
	"path/filepath"
	"sort"
	"strings"
)

// What code reads that no key can hold. Code outside the packages on disk is keyed by what it is; what it reads when
// it runs is keyed only where it is its own code, a package variable no code can change (mutableGlobals), a package
// on disk, a module's (pinned by go.sum) or a function of the standard library that computes from its arguments
// alone. Anything else it reads is open: an environment variable, a file, the clock, the process's random source,
// and a package variable that code may change through another name for its value (l := x; l[0] = 1: read without
// types, a copy of a struct counts as another name). A store cannot know from the key whether a stored result is
// the one this code would compute now.

// pureStd are the packages of the standard library whose functions compute from their arguments alone.
var pureStd = map[string]bool{"fmt": true, "strings": true, "strconv": true, "math": true, "math/bits": true,
	"math/cmplx": true, "cmp": true, "errors": true, "unicode": true, "unicode/utf8": true, "unicode/utf16": true,
	"slices": true, "maps": true, "sort": true, "bytes": true, "bufio": true, "io": true, "iter": true,
	"sync": true, "sync/atomic": true, "container/heap": true, "container/list": true, "container/ring": true,
	"encoding/binary": true, "encoding/json": true, "encoding/gob": true, "encoding/hex": true,
	"encoding/base64": true, "encoding/csv": true, "hash": true, "hash/fnv": true, "hash/crc32": true,
	"crypto/sha256": true, "regexp": true, "text/tabwriter": true, "path": true, "html": true, "reflect": true,
	"testing": true, "context": true, "log": true}

// openStd are, for packages of the standard library whose functions mostly compute from their arguments alone,
// those that do not; pureIn, for packages that mostly read the world, the names that do not (a generator's
// constructors, the standard output).
var (
	openStd = map[string]map[string]bool{
		"time":          {"Now": true, "Since": true, "Until": true},
		"path/filepath": {"Abs": true, "EvalSymlinks": true, "Glob": true, "Walk": true, "WalkDir": true},
	}
	pureIn = map[string]map[string]bool{
		"os":           {"Stdout": true, "Stderr": true},
		"flag":         {"Parse": true, "Parsed": true}, // a program's main parses its flags; reading one is open
		"math/rand/v2": {"New": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true, "Rand": true, "PCG": true, "ChaCha8": true, "Source": true, "Zipf": true},
		"math/rand":    {"New": true, "NewSource": true, "NewZipf": true, "Rand": true, "Source": true, "Zipf": true},
	}
)

// opens names what the declarations reached read that no key can hold, sorted: a function or variable of the
// standard library as package.Name, and a package variable that the file may change through another name for its
// value (mutableGlobals with aliases: l := x; l[0] = 1), with the line and what changes it.
func (s *source) opens(reached []ast.Node) []string {
	seen := map[string]bool{}
	direct := map[string]bool{}
	for _, name := range s.mutableGlobals(reached, false) {
		direct[name] = true
	}
	for _, name := range s.mutableGlobals(reached, true) {
		if !direct[name] {
			seen[name] = true
		}
	}
	for _, d := range reached {
		ast.Inspect(d, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || x.Obj != nil {
				return true
			}
			if p := s.importPath(x.Name); p != "" && s.readsOpen(p, sel.Sel.Name) {
				seen[p+"."+sel.Sel.Name] = true
			}
			return true
		})
	}
	out := make([]string, 0, len(seen))
	for o := range seen {
		out = append(out, o)
	}
	sort.Strings(out)
	return out
}

// readsOpen reports whether name of the package path, imported by s, may read what no key can hold.
func (s *source) readsOpen(path, name string) bool {
	switch {
	case s.onDisk(path), strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
		return false // a package on disk (its code is keyed) or a module's (pinned)
	case pureStd[path]:
		return false
	case openStd[path] != nil:
		return openStd[path][name]
	}
	return !pureIn[path][name]
}

// onDisk reports whether the package path, imported by s, is a package on disk.
func (s *source) onDisk(path string) bool {
	return resolve(path, moduleOf(filepath.Dir(s.name))) != ""
}
