package agentrl

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
	if _, err := OpenStore(dir); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{old: false, fresh: true, entry: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
