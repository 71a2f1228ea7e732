package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
)

// TestOpenStoreRemovesStaleTemps checks that opening a store removes what killed writes left behind, and only that.
func TestOpenStoreRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	old, fresh, entry := filepath.Join(dir, ".tmp-123-train_rl-x.bin"), filepath.Join(dir, ".tmp-124-rl_base-y.bin"),
		filepath.Join(dir, "rl_base-y.bin")
	for _, p := range []string{old, fresh, entry} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * staleTempAge)
	for _, p := range []string{old, entry} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{old: false, fresh: true, entry: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}

var intCodec = Codec[int]{
	Encode: func(w io.Writer, v int) error { _, err := fmt.Fprint(w, v); return err },
	Decode: func(r io.Reader) (v int, err error) { _, err = fmt.Fscan(r, &v); return v, err },
}

// TestCached checks each path of Cached: what it returns, whether it computed, and the line it logs.
func TestCached(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, s *Store) // before the call under test
		reopen  bool                         // the call under test is another process's: it opens the store anew
		compute bool                         // whether the call under test must compute
		log     string                       // a substring of its log; "": it logs nothing
		stored  bool                         // whether the entry exists afterwards
	}{
		{"empty store", func(*testing.T, *Store) {}, false, true, "cache: computed k", true},
		{"stored", func(t *testing.T, s *Store) { cachedInt(t, s) }, true, false, "cache: loaded k", true},
		{"loaded before in this process", func(t *testing.T, s *Store) {
			cachedInt(t, mustOpen(t, s.Dir()))
			cachedInt(t, s)
			if err := os.Remove(s.path(answerKey(t))); err != nil { // the disk is not read again
				t.Fatal(err)
			}
		}, false, false, "", false},
		{"corrupt entry", func(t *testing.T, s *Store) {
			cachedInt(t, s)
			flipLastByte(t, s.path(answerKey(t)))
		}, true, true, "unusable (checksum mismatch): recomputing", true},
		{"a directory in the entry's place", func(t *testing.T, s *Store) {
			if err := os.Mkdir(s.path(answerKey(t)), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false, true, "is a directory", false},
		{"unwritable store", func(t *testing.T, s *Store) {
			if err := os.RemoveAll(s.Dir()); err != nil {
				t.Fatal(err)
			}
		}, false, true, "but could not store it", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustStore(t)
			tt.prepare(t, s)
			if tt.reopen {
				s = mustOpen(t, s.Dir())
			}
			log := captureNotices(s)
			computed := false
			v, err := cachedAnswer(s, &computed)
			if err != nil || v != 42 {
				t.Fatalf("Cached = %d, %v; want 42", v, err)
			}
			if computed != tt.compute {
				t.Errorf("computed %v, want %v", computed, tt.compute)
			}
			if !strings.Contains(log.String(), tt.log) || tt.log == "" && log.Len() > 0 {
				t.Errorf("log %q, want it to contain %q", log.String(), tt.log)
			}
			if _, err := load(s, answerKey(t), intCodec); (err == nil) != tt.stored {
				t.Errorf("entry readable afterwards: %v, want %v", err == nil, tt.stored)
			}
		})
	}
}

// TestLoadReportsOpenErrors checks that an entry that cannot be opened is reported with the reason, not taken
// for a missing one or for a damaged one.
func TestLoadReportsOpenErrors(t *testing.T) {
	_, err := load(mustStore(t), strings.Repeat("k", 300), intCodec)
	if err == nil || errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "file name too long") {
		t.Fatalf("load with an unopenable key: %v", err)
	}
}

// mustOpen opens the store at dir with its notices and progress lines discarded (captureNotices keeps them).
func mustOpen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Notices = io.Discard
	return s
}

func cachedInt(t *testing.T, s *Store) {
	t.Helper()
	var computed bool
	if _, err := cachedAnswer(s, &computed); err != nil {
		t.Fatal(err)
	}
}

// cachedAnswer is Cached of 42 under "k", noting in computed whether it computed it.
func cachedAnswer(s *Store, computed *bool) (int, error) {
	return Cached(s, codekey.Keyed{Key: "k"}, intCodec, func() (int, error) { *computed = true; return 42, nil })
}

// answerKey is the key of cachedAnswer's entry.
func answerKey(t *testing.T) string { return "k" }

// mustStore opens a store of its own in a temporary directory.
func mustStore(t *testing.T) *Store {
	t.Helper()
	return mustOpen(t, t.TempDir())
}

func flipLastByte(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// captureNotices sends the notices and progress lines of stores to one buffer.
func captureNotices(stores ...*Store) *bytes.Buffer {
	var log bytes.Buffer
	for _, s := range stores {
		s.Notices = &log
	}
	return &log
}
