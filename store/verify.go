package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
)

// Verifying what a key cannot hold. A key holds the code that computes a result, but code from outside the packages
// on disk (a notebook cell's) may read at run time what its code does not show. Such a computation keeps a record
// of its first step beside its result, and the store serves the result, or resumes its progress, only after
// recomputing that step and finding the same record: at every serve, so that a change made in the same program
// (an environment variable set, a file written) is found as one made between programs is.

// recordSuffix ends the key of a verified computation's record of its first step.
const recordSuffix = ".first-step"

// resumableVerified is Resumable for a key that holds outside code.
func resumableVerified[T any](s *Store, k codekey.Keyed, codec Codec[T], first func() ([]byte, error), compute func(r *Resume) (T, error)) (T, error) {
	var zero T
	why := "the code of " + strings.Join(k.Outside, ", ")
	if len(k.Open) > 0 {
		why += ", which reads " + strings.Join(k.Open, ", ")
	}
	if err := s.verify(k.Key, why, first); err != nil {
		return zero, err
	}
	res, err := resumable(s, k, codec, func(r *Resume) (T, error) {
		r.record = k.Key + recordSuffix
		return compute(r)
	})
	if err != nil {
		return res, err
	}
	if _, err := loadPayload(s, k.Key+recordSuffix); errors.Is(err, os.ErrNotExist) { // resumed past its first step
		record, err := first()
		if err != nil {
			return zero, err
		}
		s.saveRecord(k.Key, record)
	}
	return res, nil
}

// verify checks a stored result or progress of key, whose key cannot hold why, against the record of its first
// step, recomputed by first, and removes them when they fail.
func (s *Store) verify(key, why string, first func() ([]byte, error)) error {
	if !s.has(key) && !s.has(key+".partial") {
		return nil // nothing stored: what is computed now keeps its own record
	}
	start := time.Now()
	s.tell(Event{Kind: Verifying, Key: key, Why: why})
	got, err := first()
	if err != nil {
		return err
	}
	want, err := load(s, key+recordSuffix, recordCodec)
	if err == nil && bytes.Equal(want, got) {
		s.tell(Event{Kind: Verified, Key: key, Took: time.Since(start)})
		return nil
	}
	differs := "no record of it is stored"
	if err == nil {
		differs = RecordDiffers(want, got)
	}
	s.tell(Event{Kind: Otherwise, Key: key, Why: why, Differs: differs})
	for _, k := range []string{key, key + ".partial"} {
		if err := s.Reset(k); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: removing %s: %w", k, err)
		}
	}
	s.saveRecord(key, got)
	return nil
}

// RecordDiffers says which part of two records of a first step differs. A record made of named parts ("name=digest"
// lines) names the parts that differ; any other names none.
func RecordDiffers(want, got []byte) string {
	parse := func(b []byte) map[string]string {
		parts := map[string]string{}
		for _, line := range strings.Split(string(b), "\n") {
			if name, digest, ok := strings.Cut(line, "="); ok {
				parts[name] = digest
			}
		}
		return parts
	}
	w, g := parse(want), parse(got)
	var names []string
	for name, d := range g {
		if w[name] != d {
			names = append(names, name)
		}
	}
	for name := range w {
		if _, ok := g[name]; !ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "the records differ"
	}
	sort.Strings(names)
	return "in " + strings.Join(names, ", ")
}

// has reports whether key has an entry on disk or in this process.
func (s *Store) has(key string) bool {
	if _, ok := s.held.Load(key); ok {
		return true
	}
	_, err := os.Stat(s.path(key))
	return err == nil
}

// saveRecord stores the record of key's first step; a failure is told (the next load verifies again).
func (s *Store) saveRecord(key string, record []byte) {
	if err := s.save(key+recordSuffix, record); err != nil {
		s.tell(Event{Kind: RecordFailed, Key: key, Err: err})
	}
}

// FirstStep records the computation's first step (the record Resumable's first recomputes) when its store
// verifies it; otherwise it does nothing.
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
