package codekey

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
