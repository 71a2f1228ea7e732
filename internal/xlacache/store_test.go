package xlacache

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStoreRoundTrip: a saved entry loads back as saved; an absent one is not found.
func TestStoreRoundTrip(t *testing.T) {
	s := NewStore(t.TempDir(), "id")
	key := s.Key([]byte("mlir"), []byte("program"), []byte("options"))
	if _, found, err := s.Load(key); found || err != nil {
		t.Fatalf("empty store: found=%v err=%v", found, err)
	}
	data := []byte("serialized executable")
	if err := s.Save(key, data); err != nil {
		t.Fatal(err)
	}
	got, found, err := s.Load(key)
	if !found || err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Load = %q, %v, %v; want %q", got, found, err, data)
	}
	if partial, _ := filepath.Glob(filepath.Join(s.Dir(), "*", ".partial-*")); len(partial) != 0 {
		t.Errorf("temporary files left: %q", partial)
	}
}

// TestStoreCorrupt: an entry whose bytes changed, or that was cut short, is found but refused; Remove deletes it.
func TestStoreCorrupt(t *testing.T) {
	s := NewStore(t.TempDir(), "id")
	key := s.Key([]byte("mlir"), []byte("program"), nil)
	for name, damage := range map[string]func([]byte) []byte{
		"flipped bit": func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"truncated":   func(b []byte) []byte { return b[:len(b)-3] },
		"header only": func(b []byte) []byte { return b[:len(magic)+5] },
		"empty":       func([]byte) []byte { return nil },
	} {
		if err := s.Save(key, []byte("serialized executable")); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(s.path(key))
		os.WriteFile(s.path(key), damage(raw), 0o644)
		if _, found, err := s.Load(key); !found || err == nil {
			t.Errorf("%s: found=%v err=%v, want found and an error", name, found, err)
		}
		s.Remove(key)
		if _, found, _ := s.Load(key); found {
			t.Errorf("%s: entry still there after Remove", name)
		}
	}
}

// TestKeySeparates: the key changes with the identity (plugin, processor, flags), the format, the program and
// the compile options, and the parts cannot be shifted into one another.
func TestKeySeparates(t *testing.T) {
	a := NewStore("", "plugin=1 cpu=x")
	b := NewStore("", "plugin=2 cpu=x")
	base := a.Key([]byte("mlir"), []byte("code"), []byte("opts"))
	for name, k := range map[string]string{
		"identity": b.Key([]byte("mlir"), []byte("code"), []byte("opts")),
		"format":   a.Key([]byte("hlo"), []byte("code"), []byte("opts")),
		"program":  a.Key([]byte("mlir"), []byte("code2"), []byte("opts")),
		"options":  a.Key([]byte("mlir"), []byte("code"), []byte("opts2")),
		"shifted":  a.Key([]byte("mlir"), []byte("cod"), []byte("eopts")),
	} {
		if k == base {
			t.Errorf("changing the %s leaves the key as it was", name)
		}
	}
	if again := a.Key([]byte("mlir"), []byte("code"), []byte("opts")); again != base {
		t.Errorf("the key of the same request changed: %s, %s", again, base)
	}
}

// TestStoreEviction: a bounded store removes the least recently used entries (written or loaded longest ago)
// until a new entry fits, stays within its bound, and refuses an entry larger than the bound.
func TestStoreEviction(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 1000)
	entry := int64(len(magic) + sha256.Size + len(data)) // bytes one entry takes on disk
	s := NewStore(t.TempDir(), "id").SetLimit(3 * entry)
	key := func(name string) string { return s.Key([]byte("mlir"), []byte(name), nil) }
	long := time.Now().Add(-time.Hour)
	for i, name := range []string{"a", "b", "c"} {
		if err := s.Save(key(name), data); err != nil {
			t.Fatal(err)
		}
		at := long.Add(time.Duration(i) * time.Minute) // a oldest, then b, then c
		if err := os.Chtimes(s.path(key(name)), at, at); err != nil {
			t.Fatal(err)
		}
	}
	if _, found, err := s.Load(key("a")); !found || err != nil { // a becomes the most recently used
		t.Fatalf("Load a: found=%v err=%v", found, err)
	}
	if err := s.Save(key("d"), data); err != nil {
		t.Fatal(err)
	}
	present := func() map[string]bool {
		got := map[string]bool{}
		for _, name := range []string{"a", "b", "c", "d", "e"} {
			_, err := os.Stat(s.path(key(name)))
			got[name] = err == nil
		}
		return got
	}
	want := map[string]bool{"a": true, "b": false, "c": true, "d": true, "e": false}
	if got := present(); !maps.Equal(got, want) {
		t.Errorf("after saving d: entries %v, want %v (b least recently used)", got, want)
	}
	// Overwriting an entry that is there evicts nothing.
	if err := s.Save(key("c"), data); err != nil {
		t.Fatal(err)
	}
	if got := present(); !maps.Equal(got, want) {
		t.Errorf("after saving c again: entries %v, want %v", got, want)
	}
	// A larger entry makes room for itself from the least recently used: here a, then d, then c.
	for i, name := range []string{"a", "d", "c"} {
		at := long.Add(time.Duration(10+i) * time.Minute)
		if err := os.Chtimes(s.path(key(name)), at, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Save(key("e"), bytes.Repeat([]byte("y"), 2*len(data))); err != nil {
		t.Fatal(err)
	}
	want = map[string]bool{"a": false, "b": false, "c": true, "d": false, "e": true}
	if got := present(); !maps.Equal(got, want) {
		t.Errorf("after saving a double entry: entries %v, want %v", got, want)
	}
	if total := dirBytes(t, s.Dir()); total > 3*entry {
		t.Errorf("store takes %d bytes, bound %d", total, 3*entry)
	}
	if err := s.Save(key("huge"), bytes.Repeat([]byte("z"), int(3*entry))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("saving an entry larger than the bound: %v, want ErrTooLarge", err)
	}
	if got := present(); !maps.Equal(got, want) {
		t.Errorf("a refused entry removed others: entries %v, want %v", got, want)
	}

	unbounded := NewStore(t.TempDir(), "id")
	for _, name := range []string{"a", "b", "c", "d"} {
		if err := unbounded.Save(unbounded.Key(nil, []byte(name), nil), data); err != nil {
			t.Fatal(err)
		}
	}
	if n := dirBytes(t, unbounded.Dir()); n != 4*entry {
		t.Errorf("unbounded store takes %d bytes, want %d", n, 4*entry)
	}
}

// dirBytes returns the bytes the files under dir take.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		total += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}
