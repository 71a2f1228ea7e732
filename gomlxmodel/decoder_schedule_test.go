package gomlxmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDecoderScheduleBits runs the same queues through decoders of each schedule, step by step, on 16 rows that
// prefill prompts of 5 to 40 tokens, then mostly decode one token while some prefill observations of 2 to 40
// tokens and some have finished (nothing queued). ScheduleAuto must equal ScheduleLegacy bit for bit on both
// backends, and ScheduleSplit on pure Go; on XLA, whose CPU code for a graph depends on its shapes (rows × token
// slots), the split only matches the legacy padded graph within 1e-5, and the test logs by how much (not under
// -short on XLA, where the split's many shapes take most of a minute to compile).
func TestDecoderScheduleBits(t *testing.T) {
	cfg := DefaultConfig(150)
	m := mustNew(t, cfg, 7)
	rng := rand.New(rand.NewPCG(7, 8))
	const B = 16
	if testing.Short() && !pureGoBackend() {
		t.Skip("-short on XLA: the split's shapes take most of a minute to compile")
	}
	schedules := []DecoderSchedule{ScheduleLegacy, ScheduleAuto, ScheduleSplit}
	decs := make([]*Decoder, len(schedules))
	for i, s := range schedules {
		prev := SetDecoderSchedule(s)
		d, err := m.NewDecoder(B)
		SetDecoderSchedule(prev)
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
			if math.Float32bits(logits[1][j]) != math.Float32bits(logits[0][j]) {
				t.Fatalf("step %d: ScheduleAuto logit %d = %g, ScheduleLegacy %g", step, j, logits[1][j], logits[0][j])
			}
			total++
			if math.Float32bits(logits[2][j]) != math.Float32bits(logits[0][j]) {
				splitDiff++
				splitWorst = math.Max(splitWorst, math.Abs(float64(logits[2][j]-logits[0][j])))
			}
		}
	}
	for i, d := range decs {
		ex, need := d.Positions()
		t.Logf("schedule %d: token positions executed/needed %d/%d (%.2f×)", schedules[i], ex, need, float64(ex)/float64(need))
	}
	switch {
	case len(decs) == 2:
	case splitWorst > 1e-5:
		t.Fatalf("ScheduleSplit differs from ScheduleLegacy by %g", splitWorst)
	case splitDiff > 0 && pureGoBackend():
		t.Fatalf("pure Go: ScheduleSplit changes the bits of %.0f of %d logits (max %g)", splitDiff, total, splitWorst)
	case splitDiff > 0:
		t.Logf("XLA: ScheduleSplit changes the bits of %.0f of %d logits (max |difference| %g)", splitDiff, total, splitWorst)
	default:
		t.Logf("ScheduleSplit: all %d logits bit-identical", total)
	}
}
