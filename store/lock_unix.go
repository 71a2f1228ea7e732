//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock takes the store's lock of key, for computing it, waiting (after one Waiting event) while
// another process holds it; waited reports whether it did. The lock is an flock(2) lock on the file KEY.lock of
// the store's directory, which the kernel releases when its holder ends, however it ends. release removes the
// file, then releases the lock. A lock that cannot be taken (a read-only cache directory) is told (LockFailed), and the
// computation goes on without one.
func (s *Store) lock(key string) (release func(), waited bool, err error) {
	path := s.lockPath(key)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			s.tell(Event{Kind: LockFailed, Key: key, Err: err})
			return func() {}, waited, nil
		}
		fd := int(f.Fd())
		err = flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			if !waited {
				s.tell(Event{Kind: Waiting, Key: key})
			}
			waited = true
			err = flock(fd, syscall.LOCK_EX)
		}
		if err != nil {
			f.Close()
			return nil, waited, fmt.Errorf("cache: lock %s: %w", key, err)
		}
		if release := current(f, path); release != nil {
			return release, waited, nil
		}
	}
}

// current returns the release of the lock held on f, the file opened at path, if f is still the file at path;
// otherwise it closes f and returns nil. A holder removes the file before it releases the lock, so a lock taken on
// a file that has since been removed (or replaced) guards nothing: the caller takes the current file's.
func current(f *os.File, path string) (release func()) {
	held, errHeld := f.Stat()
	now, errNow := os.Stat(path)
	if errHeld == nil && errNow == nil && os.SameFile(held, now) {
		return func() {
			_ = os.Remove(path)
			f.Close()
		}
	}
	f.Close()
	return nil
}

// flock is flock(2), retried when a signal interrupts it.
func flock(fd, how int) error {
	for {
		if err := syscall.Flock(fd, how); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tryLock takes the store's lock of key without waiting: busy reports that another process holds it.
func (s *Store) tryLock(key string) (release func(), busy bool, err error) {
	path := s.lockPath(key)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, false, fmt.Errorf("cache: lock %s: %w", key, err)
		}
		if err := flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, true, nil
			}
			return nil, false, fmt.Errorf("cache: lock %s: %w", key, err)
		}
		if release := current(f, path); release != nil {
			return release, false, nil
		}
	}
}
