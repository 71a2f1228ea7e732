package gomlxmodel

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCompileStats checks that a new input shape counts as a compilation and a repeated one does not.
func TestCompileStats(t *testing.T) {
	cfg := tinyConfig()
	cfg.Vocab = 23 // a configuration of its own: no other test has compiled its graphs
	m := mustNew(t, cfg, 1)
	ids := randomIDs(rand.New(rand.NewPCG(1, 2)), 3*7, cfg.Vocab)
	n0, d0 := CompileStats()
	k0 := CompileStatsByKind()[kindLogits]
	if _, err := m.Logits(ids, 3, 7); err != nil {
		t.Fatal(err)
	}
	n1, d1 := CompileStats()
	if k1 := CompileStatsByKind()[kindLogits]; k1.Graphs != k0.Graphs+1 || k1.Total <= k0.Total {
		t.Errorf("first call on a new shape: %q compilations %+v → %+v", kindLogits, k0, k1)
	}
	if _, err := m.Logits(ids, 3, 7); err != nil {
		t.Fatal(err)
	}
	n2, d2 := CompileStats()
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
