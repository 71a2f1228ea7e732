package gomlxmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDecoderSplitBits runs the same queues through a split decoder and a padded one (the oracle), step by step, on
// 16 rows that prefill prompts of 5 to 40 tokens, then mostly decode one token while some prefill observations of 2
// to 40 tokens and some have finished (nothing queued). On pure Go, where NewDecoder splits, the split must give the
// padded graph's logits bit for bit; on XLA, whose CPU code for a graph depends on its shapes, it only matches within
// 1e-5, and the test logs by how much (not under -short on XLA, where the split's shapes take most of a minute to
// compile).
func TestDecoderSplitBits(t *testing.T) {
	cfg := DefaultConfig(150)
	m := mustNew(t, cfg, 7)
	d, err := m.NewDecoder(1)
	if err != nil {
		t.Fatal(err)
	}
	if d.split != pureGoBackend() {
		t.Errorf("NewDecoder splits: %v, on the pure-Go backend: %v", d.split, pureGoBackend())
	}
	d.Close()
	if testing.Short() && !pureGoBackend() {
		t.Skip("-short on XLA: the split's shapes take most of a minute to compile")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const B = 16
	var decs [2]*Decoder // padded, split
	for i := range decs {
		d, err := m.newDecoder(B, i == 1)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		decs[i] = d
	}
	var diff, worst float64
	var total int
	for step := range 24 {
		for b := range B {
			n := 1
			switch {
			case step == 0:
				n = 5 + rng.IntN(36)
			case step > 16 && b%3 == 0: // finished
				continue
			case rng.IntN(6) == 0:
				n = 2 + rng.IntN(39)
			}
			feedEach(decs[:], b, randomIDs(rng, n, cfg.Vocab))
		}
		logits := stepEach(t, decs[:])
		for j := range logits[0] {
			total++
			if math.Float32bits(logits[1][j]) != math.Float32bits(logits[0][j]) {
				diff++
				worst = math.Max(worst, math.Abs(float64(logits[1][j]-logits[0][j])))
			}
		}
	}
	for i, name := range []string{"padded", "split"} {
		ex, need := decs[i].Positions()
		t.Logf("%s: token positions executed/needed %d/%d (%.2f×)", name, ex, need, float64(ex)/float64(need))
	}
	switch {
	case worst > 1e-5:
		t.Fatalf("the split differs from the padded graph by %g", worst)
	case diff > 0 && pureGoBackend():
		t.Fatalf("pure Go: the split changes the bits of %.0f of %d logits (max %g)", diff, total, worst)
	case diff > 0:
		t.Logf("XLA: the split changes the bits of %.0f of %d logits (max |difference| %g)", diff, total, worst)
	default:
		t.Logf("the split: all %d logits bit-identical", total)
	}
}
