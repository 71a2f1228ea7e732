package gomlxmodel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCompileStats checks that a new input shape counts as a compilation and a repeated one does not.
func TestCompileStats(t *testing.T) {
	cfg := tinyConfig()
	eng := freshEngine()
	m := must(New(eng, cfg, 1))
	ids := randomIDs(rand.New(rand.NewPCG(1, 2)), 3*7, cfg.Vocab)
	n0, d0 := eng.CompileStats()
	k0 := eng.CompileStatsByKind()[kindLogits]
	if _, err := m.Logits(ids, 3, 7); err != nil {
		t.Fatal(err)
	}
	n1, d1 := eng.CompileStats()
	if k1 := eng.CompileStatsByKind()[kindLogits]; k1.Graphs != k0.Graphs+1 || k1.Total <= k0.Total {
		t.Errorf("first call on a new shape: %q compilations %+v → %+v", kindLogits, k0, k1)
	}
	if _, err := m.Logits(ids, 3, 7); err != nil {
		t.Fatal(err)
	}
	n2, d2 := eng.CompileStats()
	if n1 != n0+1 || d1 <= d0 {
		t.Errorf("first call on a new shape: compilations %d → %d, time %v → %v", n0, n1, d0, d1)
	}
	if n2 != n1 || d2 != d1 {
		t.Errorf("repeated shape counted again: %d → %d", n1, n2)
	}
}

// TestScalar: scalar reads a one-value tensor and reports the size of any other instead of a nil error.
func TestScalar(t *testing.T) {
	for _, tc := range []struct {
		name    string
		values  []float32
		want    float64
		wantErr string
	}{
		{"one value", []float32{2.5}, 2.5, ""},
		{"two values", []float32{1, 2}, 0, "tensor holds 2 values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scalar(f32Tensor(tc.values, len(tc.values)))
			switch {
			case tc.wantErr == "" && (err != nil || got != tc.want):
				t.Errorf("scalar = %g, %v; want %g", got, err, tc.want)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

// TestReleaseGraphs: past the bound on live graphs, run releases every executor's graphs; the executors
// still work afterwards, compile the shapes they meet again, and give the same bits.
func TestReleaseGraphs(t *testing.T) {
	cfg := tinyConfig()
	eng := freshEngine() // an engine of its own: no other test's graphs are live on it
	m := must(New(eng, cfg, 3))
	rng := rand.New(rand.NewPCG(3, 4))
	const T = 7
	rows := []int{1, 2, 4, 8} // four batch buckets: four graphs
	ids := make([][]int32, len(rows))
	want := make([][]float32, len(rows))
	for i, B := range rows {
		ids[i] = randomIDs(rng, B*T, cfg.Vocab)
		var err error
		if want[i], err = m.Logits(ids[i], B, T); err != nil {
			t.Fatal(err)
		}
	}
	state := func() (releases, live int) {
		eng.compiles.mu.Lock()
		defer eng.compiles.mu.Unlock()
		return eng.compiles.releases, len(eng.compiles.seen)
	}
	eng.SetMaxLiveGraphs(2)
	r0, _ := state()
	if _, err := m.Logits(randomIDs(rng, 16*T, cfg.Vocab), 16, T); err != nil { // a fifth shape: over the bound
		t.Fatal(err)
	}
	if r, live := state(); r != r0+1 || live != 0 {
		t.Fatalf("a new graph beyond the bound: %d releases, %d graphs live; want 1 and 0", r-r0, live)
	}
	for round := range 2 {
		for i, B := range rows {
			n0, _ := eng.CompileStats()
			got, err := m.Logits(ids[i], B, T)
			if err != nil {
				t.Fatal(err)
			}
			if n1, _ := eng.CompileStats(); n1 != n0+1 {
				t.Errorf("round %d, %d rows: compilations %d → %d, want a compilation of the released graph", round, B, n0, n1)
			}
			for j := range got {
				if math.Float32bits(got[j]) != math.Float32bits(want[i][j]) {
					t.Fatalf("round %d, %d rows: logit %d = %g after a release, %g before", round, B, j, got[j], want[i][j])
				}
			}
		}
	}
	// Eight first calls, a release at every third: two more releases, and two graphs live.
	if r, live := state(); r != r0+3 || live != 2 {
		t.Errorf("after two rounds of four shapes: %d releases, %d graphs live; want 3 and 2", r-r0, live)
	}
}
