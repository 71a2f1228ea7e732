package gomlxmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// newScheduled makes a decoder of B rows: the split one every caller gets, or the padded oracle.
func newScheduled(m *Model, B int, padded bool) (*Decoder, error) {
	return m.viewOn(engineWith(schedule{paddedDecode: padded})).NewDecoder(B)
}

// TestDecoderScheduleBits runs the same queues through the split decoder and the padded oracle, step by step, on
// 16 rows that prefill prompts of 5 to 40 tokens, then mostly decode one token while some prefill observations of
// 2 to 40 tokens and some have finished (nothing queued). On pure Go the split must equal the padded graph bit for
// bit; on XLA, whose CPU code for a graph depends on its shapes (rows × token slots), within 1e-5, and the test
// logs by how much (not under -short on XLA, where the split's many shapes take most of a minute to compile).
func TestDecoderScheduleBits(t *testing.T) {
	cfg := DefaultConfig(150)
	m := mustNew(t, cfg, 7)
	rng := rand.New(rand.NewPCG(7, 8))
	const B = 16
	if testing.Short() && !testEng().pureGo {
		t.Skip("-short on XLA: the split's shapes take most of a minute to compile")
	}
	schedules := []string{"padded", "split"}
	decs := make([]*Decoder, len(schedules))
	for i, s := range schedules {
		d, err := newScheduled(m, B, s == "padded")
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		decs[i] = d
	}
	var splitDiff, splitWorst float64
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
			feedEach(decs, b, randomIDs(rng, n, cfg.Vocab))
		}
		logits := stepEach(t, decs)
		for j := range logits[0] {
			total++
			if math.Float32bits(logits[1][j]) != math.Float32bits(logits[0][j]) {
				splitDiff++
				splitWorst = math.Max(splitWorst, math.Abs(float64(logits[1][j]-logits[0][j])))
			}
		}
	}
	for i, d := range decs {
		ex, need := d.Positions()
		t.Logf("%s: token positions executed/needed %d/%d (%.2f×)", schedules[i], ex, need, float64(ex)/float64(need))
	}
	switch {
	case splitWorst > 1e-5:
		t.Fatalf("the split differs from the padded oracle by %g", splitWorst)
	case splitDiff > 0 && testEng().pureGo:
		t.Fatalf("pure Go: the split changes the bits of %.0f of %d logits (max %g)", splitDiff, total, splitWorst)
	case splitDiff > 0:
		t.Logf("XLA: the split changes the bits of %.0f of %d logits (max |difference| %g)", splitDiff, total, splitWorst)
	default:
		t.Logf("the split: all %d logits bit-identical", total)
	}
}
