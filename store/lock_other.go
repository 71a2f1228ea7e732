//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

// lock does not lock where flock(2) is missing: two processes that need the same result both compute it.
func (s *Store) lock(key string) (release func(), waited bool, err error) {
	return func() {}, false, nil
}

// tryLock does not lock where flock(2) is missing.
func (s *Store) tryLock(key string) (release func(), busy bool, err error) {
	return func() {}, false, nil
}
