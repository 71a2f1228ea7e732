package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Verifying what a key cannot hold. A key holds the code that computes a result, but code from outside the library
// (a notebook cell's) may read at run time what its code does not show. Such a computation keeps a record of its
// first step beside its result, and the store serves the result, or resumes its progress, only after recomputing
// that step and finding the same record.

// recordSuffix ends the key of a verified computation's record of its first step.
const recordSuffix = ".first-step"

// Verify says how to check a stored result of a computation whose key may not hold everything that determines it.
type Verify struct {
	// First recomputes the computation's first step and returns a record of it (a digest of the state after the
	// step). It must return what the computation's own first step records (Resume.FirstStep) whenever the two
	// compute the same thing.
	First func() ([]byte, error)
	// Why says what the key cannot hold (the code from outside the library it reads), for the line that reports a
	// stored result computed otherwise.
	Why string
}

// ResumableVerified is Resumable for a computation whose key may not hold everything that determines it. Before it
// serves a stored result or resumes stored progress, once per process and key, it recomputes the first step with
// v.First and compares it with the record the computation kept (Resume.FirstStep): on a mismatch, or without a
// record, it notes in one line that the stored result was computed otherwise, naming v.Why, removes the result
// and its progress, and computes again. The computation must call r.FirstStep after its first step.
func ResumableVerified[T any](s *Store, key string, codec Codec[T], v Verify, compute func(r *Resume) (T, error)) (T, error) {
	var zero T
	if v.First == nil {
		return zero, fmt.Errorf("store: ResumableVerified(%s): Verify.First is nil", key)
	}
	if err := s.verify(key, v); err != nil {
		return zero, err
	}
	res, err := Resumable(s, key, codec, func(r *Resume) (T, error) {
		r.record = key + recordSuffix
		return compute(r)
	})
	if err != nil {
		return res, err
	}
	if _, err := loadPayload(s, key+recordSuffix); errors.Is(err, os.ErrNotExist) { // resumed past its first step
		record, err := v.First()
		if err != nil {
			return zero, err
		}
		s.saveRecord(key, record)
	}
	return res, nil
}

// verify checks a stored result or progress of key against v, once per process, and removes them when they fail.
func (s *Store) verify(key string, v Verify) error {
	if _, done := s.verified.Load(key); done {
		return nil
	}
	if !s.has(key) && !s.has(key+".partial") {
		s.verified.Store(key, true) // nothing stored: what is computed now keeps its own record
		return nil
	}
	start := time.Now()
	s.notef("cache: verifying %s (its first step again: %s)\n", key, v.Why)
	got, err := v.First()
	if err != nil {
		return err
	}
	want, err := load(s, key+recordSuffix, recordCodec)
	switch {
	case err == nil && bytes.Equal(want, got):
		s.notef("cache: verified %s in %s\n", key, time.Since(start).Round(100*time.Millisecond))
	default:
		s.notef("cache: %s: the stored run was computed otherwise (its first step differs; the key holds %s, not "+
			"what it reads at run time): computing it again\n", key, v.Why)
		for _, k := range []string{key, key + ".partial"} {
			if err := s.Reset(k); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("store: removing %s: %w", k, err)
			}
		}
		s.saveRecord(key, got)
	}
	s.verified.Store(key, true)
	return nil
}

// has reports whether key has an entry on disk or in this process.
func (s *Store) has(key string) bool {
	if _, ok := s.held.Load(key); ok {
		return true
	}
	_, err := os.Stat(s.path(key))
	return err == nil
}

// saveRecord stores the record of key's first step; a failure is noted (the next load verifies again).
func (s *Store) saveRecord(key string, record []byte) {
	if err := s.save(key+recordSuffix, record); err != nil {
		s.notef("cache: could not store the record of %s's first step: %v\n", key, err)
	}
}

// FirstStep records the computation's first step (the record Verify.First recomputes) when its store verifies it
// (ResumableVerified); otherwise it does nothing.
func (r *Resume) FirstStep(record []byte) {
	if r.record != "" {
		r.store.saveRecord(r.record[:len(r.record)-len(recordSuffix)], record)
	}
}

// recordCodec stores a record as it is.
var recordCodec = Codec[[]byte]{
	Encode: func(w io.Writer, b []byte) error { _, err := w.Write(b); return err },
	Decode: func(r io.Reader) ([]byte, error) { return io.ReadAll(r) },
}
