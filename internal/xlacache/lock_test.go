//go:build unix

package xlacache

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockWaits: while one holder has a program's lock, another waits for it, and finds the entry the first
// wrote; another program's lock does not wait. Eviction leaves lock files alone.
func TestLockWaits(t *testing.T) {
	s := NewStore(t.TempDir(), "id").SetLimit(1 << 20)
	key := s.Key([]byte("mlir"), []byte("program"), nil)
	other := s.Key([]byte("mlir"), []byte("another program"), nil)
	unlock := s.Lock(key)

	got := make(chan []byte)
	go func() {
		defer s.Lock(key)() // waits for the first holder
		data, _, _ := s.Load(key)
		got <- data
	}()
	s.Lock(other)() // not held: returns at once
	select {
	case data := <-got:
		t.Fatalf("the second holder did not wait (found %q)", data)
	case <-time.After(100 * time.Millisecond):
	}
	if err := s.Save(key, []byte("compiled once")); err != nil {
		t.Fatal(err)
	}
	unlock()
	select {
	case data := <-got:
		if !bytes.Equal(data, []byte("compiled once")) {
			t.Errorf("after the wait, Load = %q", data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second holder still waits after the first released the lock")
	}

	s.SetLimit(int64(len(magic) + 32 + 8))
	if err := s.Save(other, []byte("8 bytes!")); err != nil {
		t.Fatal(err)
	}
	locks, _ := filepath.Glob(filepath.Join(s.Dir(), "*", "*"+lockSuffix))
	if len(locks) != 2 {
		t.Errorf("lock files after eviction: %q, want both programs'", locks)
	}
	if _, found, _ := s.Load(key); found {
		t.Error("the older entry was not evicted")
	}
}

// TestTrace: one line per event, naming the program from its text.
func TestTrace(t *testing.T) {
	var b strings.Builder
	s := NewStore(t.TempDir(), "id").SetTrace(&b)
	s.trace("compile", strings.Repeat("ab", 32), moduleName([]byte("module @decode_8x128 attributes {x} {")), 1500*time.Millisecond, 42)
	s.trace("load", "cd", moduleName([]byte("no module here")), 0, 7)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], " compile abababababab 1.500 42 decode_8x128") ||
		!strings.HasSuffix(lines[1], " load cd 0.000 7 -") {
		t.Errorf("trace:\n%s", b.String())
	}
}
