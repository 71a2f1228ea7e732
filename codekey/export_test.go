package codekey

import "time"

// FuncHash is the hash under which Of keys the function the runtime names name whose code starts at line of the Go
// file src (a function literal is named like pkg.F.func1), with what Of refuses refused.
func FuncHash(src []byte, name string, line int) (string, error) {
	s, err := parseSource("cell.go", src)
	if err != nil {
		return "", err
	}
	roots, _, err := s.funcRoots(name, line)
	if err != nil {
		return "", err
	}
	if err := s.readsMutable(s.reach(roots)); err != nil {
		return "", err
	}
	return s.hash(roots), nil
}

// OpensOf is what the code of the top-level declaration name of the Go file src, and everything it reaches, reads
// that no key can hold (Keyed.Open).
func OpensOf(src []byte, name string) ([]string, error) {
	s, err := parseSource("cell.go", src)
	if err != nil {
		return nil, err
	}
	return s.opens(s.reach(s.decls[name])), nil
}

// CodeOf is the code that a key whose code reaches the packages in dirs holds: its digest and packages.
func CodeOf(dirs ...string) (string, []string, error) {
	digest, pkgs, _, err := codeOf(dirs)
	return digest, pkgs, err
}

// ForgetCode makes this process read the packages on disk again and take itself for started at start, for tests
// that edit a copy of the module.
func ForgetCode(start time.Time) {
	packagesMu.Lock()
	packages = map[string]*pkgCode{}
	packagesMu.Unlock()
	parsed.Clear()
	libraryDecls.Clear()
	started = start
}

// ProgramOf is the digest of the code that the program in the Go file src runs around outside code declared in it,
// and what that code reads that no key can hold (Keyed.InProgram, Keyed.ProgramOpen).
func ProgramOf(src []byte) (string, []string, error) {
	s, err := parseSource("cell.go", src)
	if err != nil {
		return "", nil, err
	}
	f := &found{roots: map[string]bool{}, sources: []*source{s}}
	program, open := f.program()
	return program, open, nil
}

// PackageReads is what the package in dir reads of the process's surroundings, and whether it says so (the reads
// directive, or numerics).
func PackageReads(dir string) (reads []string, declared bool, err error) {
	p := readPackage(dir)
	return p.reads, p.declared || p.numerics, p.err
}

// ReadsOpen is what a key reaching the packages in dirs cannot hold of what they read.
var ReadsOpen = readsOpen
