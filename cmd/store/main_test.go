package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/store"
)

var intCodec = store.Codec[int]{
	Encode: func(w io.Writer, v int) error { _, err := fmt.Fprint(w, v); return err },
	Decode: func(r io.Reader) (v int, err error) { _, err = fmt.Fscan(r, &v); return v, err },
}

// stored computes three results in a new store at dir: two of the current code, one whose description says it
// was computed by other code, the last of which was last used a week ago.
func stored(t *testing.T, dir string) (current, old, stale codekey.Keyed) {
	t.Helper()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Notices = io.Discard
	keys := make([]codekey.Keyed, 3)
	for i, name := range []string{"probe_current", "probe_old", "probe_stale"} {
		if keys[i], err = codekey.KeyOf(name, store.Entry{Name: name}); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Cached(s, keys[i], intCodec, func() (int, error) { return i, nil }); err != nil {
			t.Fatal(err)
		}
	}
	week := time.Now().Add(-7 * 24 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, keys[1].Key+".bin"), week, week); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(dir, keys[2].Key+".meta")
	data, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	var e store.Entry
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	e.Code = "0000000000000000"
	data, _ = json.Marshal(e)
	if err := os.WriteFile(meta, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return keys[0], keys[1], keys[2]
}

func TestListAndPrune(t *testing.T) {
	dir := t.TempDir()
	current, old, stale := stored(t, dir)
	list := func(args ...string) string {
		t.Helper()
		var out strings.Builder
		if err := run(append([]string{"-dir", dir}, args...), &out, io.Discard); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return out.String()
	}
	out := list()
	for _, want := range []string{current.Key, old.Key, stale.Key, "3 of 3 results selected", "7 days ago", current.Code[:8]} {
		if !strings.Contains(out, want) {
			t.Errorf("the listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "  current\n") != 2 || strings.Count(out, "  stale\n") != 1 {
		t.Errorf("want two current results and one stale:\n%s", out)
	}
	if out := list("-stale", "-prune"); !strings.Contains(out, "1 of 3 results removed") || !strings.Contains(out, stale.Key) {
		t.Errorf("-stale -prune:\n%s", out)
	}
	if out := list("-older", "48h", "-prune"); !strings.Contains(out, "1 of 2 results removed") || !strings.Contains(out, old.Key) {
		t.Errorf("-older 48h -prune:\n%s", out)
	}
	out = list()
	if !strings.Contains(out, "1 of 1 results selected") || !strings.Contains(out, current.Key) {
		t.Errorf("after pruning:\n%s", out)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "probe_*"))
	if len(left) != 2 { // the current result and its description
		t.Errorf("files left: %q", left)
	}
	if err := run([]string{"-dir", dir, "-prune"}, io.Discard, io.Discard); err == nil {
		t.Error("-prune without a filter: no error")
	}
}
