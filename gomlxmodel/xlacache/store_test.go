package xlacache

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// TestHeaderMatchesGoXLA: pjrt_c_api.h, which hook.go compiles against, is the one go-xla (at the version in
// go.mod) compiles against, so the API table and argument structs this package reads and writes have the layout
// go-xla's plugin loading assumes.
func TestHeaderMatchesGoXLA(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/gomlx/go-xla").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	theirs, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "pkg", "pjrt", "pjrt_c_api.h"))
	if err != nil {
		t.Skipf("go-xla's header: %v", err)
	}
	ours, err := os.ReadFile("pjrt_c_api.h")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, theirs) {
		t.Fatal("pjrt_c_api.h differs from go-xla's: copy go-xla's header here when go.mod changes its version")
	}
}
