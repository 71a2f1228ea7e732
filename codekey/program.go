package codekey

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"sort"
	"sync"
)

// The program around a result. What outside code reads when it runs (a package variable, a value of the library's
// held by the program) is what the program's code made it before: the code that runs from its main and init
// functions and its package variables' initializers. The same code makes the same values at the same point of the
// program, so a result that no first step can verify is found again under its key, that code, and the number of
// times the program asked for the key before (Keyed.InProgram).

// program hashes, for the files of the outside code found, the code each file runs (programRoots) and everything
// it reaches, adding to the roots the packages on disk it names; it also names what that code reads that no key
// can hold. It returns "" when no outside code was found.
func (f *found) program() (string, []string) {
	if len(f.sources) == 0 {
		return "", nil
	}
	sources := slices.Clone(f.sources)
	sort.Slice(sources, func(i, j int) bool { return sources[i].name < sources[j].name })
	h := sha256.New()
	var open []string
	for _, s := range sources {
		roots := s.programRoots()
		reached := s.reach(roots)
		fmt.Fprintf(h, "%s\x00", s.hash(roots))
		for _, d := range s.importedDirs(reached) {
			f.roots[d] = true
		}
		for _, o := range s.opens(reached) {
			if !slices.Contains(open, o) {
				open = append(open, o)
			}
		}
	}
	sort.Strings(open)
	return hex.EncodeToString(h.Sum(nil))[:8], open
}

// programRoots are the declarations of s whose code runs on its own: in a main package, main, the init functions
// and the package variables (their initializers); in a test's file, every declaration.
func (s *source) programRoots() []ast.Node {
	var roots []ast.Node
	for _, d := range s.file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if s.file.Name.Name != "main" || d.Recv == nil && (d.Name.Name == "main" || d.Name.Name == "init") {
				roots = append(roots, d)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				if _, ok := spec.(*ast.ValueSpec); ok && (d.Tok == token.VAR || s.file.Name.Name != "main") {
					roots = append(roots, spec)
				}
			}
		}
	}
	return roots
}

// asked counts, per key and program, how many times this process asked for the key.
var asked struct {
	sync.Mutex
	n map[string]int
}

// inProgram is the key of the n-th time this process asks for key under program (n from 0).
func inProgram(key, program string) string {
	asked.Lock()
	defer asked.Unlock()
	if asked.n == nil {
		asked.n = map[string]int{}
	}
	n := asked.n[key+program]
	asked.n[key+program] = n + 1
	return fmt.Sprintf("%s-%s-%d", key, program, n)
}

// NewProgram makes this process count the keys it asks for from zero again, as a new program does: for tests that
// stand for several programs in one process.
func NewProgram() {
	asked.Lock()
	asked.n = nil
	asked.Unlock()
}
