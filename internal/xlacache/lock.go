//go:build unix

package xlacache

import (
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes the store's lock on key, waiting while another process (or goroutine) holds it, and returns its
// release. The process that compiles a program holds the program's lock until its entry is written, so the
// chapter's notebooks, started together and needing the same graphs, compile each once: the others wait and
// load it. A lock that cannot be taken (an unwritable folder) is no lock: the caller compiles. The lock is the
// kernel's (flock), so a process that dies releases it.
func (s *Store) Lock(key string) (unlock func()) {
	p := s.path(key) + lockSuffix
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return func() {}
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return func() {}
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
