package gomlxmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDecoderMatchesForward feeds rows with prefills of different sizes, single sampled tokens and a
// reset, across cache growth, and checks every Step's logits against the full forward pass
// (max abs difference ≤ 1e-5), at TinyAgent's real size, under each schedule (on XLA the split's cache
// grows in powers of two).
func TestDecoderMatchesForward(t *testing.T) {
	for _, padded := range []bool{true, false} {
		t.Run(map[bool]string{true: "padded", false: "split"}[padded], func(t *testing.T) {
			testDecoderMatchesForward(t, engineWith(schedule{paddedDecode: padded}))
		})
	}
}

func testDecoderMatchesForward(t *testing.T, eng *Engine) {
	cfg := DefaultConfig(150)
	m, err := New(eng, cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const B = 3
	d, err := m.NewDecoder(B)
	if err != nil {
		t.Fatal(err)
	}
	V := cfg.Vocab
	seqs := make([][]int32, B)
	worst := 0.0
	check := func(step int, logits []float32, active []bool) {
		t.Helper()
		for b := range B {
			if !active[b] {
				continue
			}
			T := len(seqs[b])
			if d.Len(b) != T {
				t.Fatalf("step %d row %d: Len %d, want %d", step, b, d.Len(b), T)
			}
			full, err := m.Logits(seqs[b], 1, T)
			if err != nil {
				t.Fatal(err)
			}
			want := full[(T-1)*V : T*V]
			for v := range V {
				diff := math.Abs(float64(logits[b*V+v] - want[v]))
				worst = math.Max(worst, diff)
				if diff > 1e-5 {
					t.Fatalf("step %d row %d (len %d): logit %d = %g, full forward %g", step, b, T, v, logits[b*V+v], want[v])
				}
			}
		}
	}
	for step := range 20 {
		active := make([]bool, B)
		for b := range B {
			if step == 7 && b == 1 { // a per-call context view: start the row again
				d.ResetRow(b)
				seqs[b] = nil
			}
			var n int
			switch {
			case step == 0 || (step == 7 && b == 1):
				n = 5 + 9*b // prefill
			case step%4 == 3:
				n = 1 + rng.IntN(40) // an observation
			default:
				n = 1 // the sampled token
			}
			if b == 2 && step%5 == 4 {
				continue // nothing queued for this row
			}
			tok := randomIDs(rng, n, V)
			seqs[b] = append(seqs[b], tok...)
			d.Feed(b, tok)
			active[b] = true
		}
		logits, err := d.Step()
		if err != nil {
			t.Fatal(err)
		}
		check(step, logits, active)
	}
	if d.L <= d.cacheLen(1) {
		t.Errorf("cache never grew (capacity %d)", d.L)
	}
	t.Logf("max abs difference %.2g", worst)
}

func TestDecoderErrors(t *testing.T) {
	cfg := tinyConfig()
	m := mustNew(t, cfg, 1)
	if _, err := m.NewDecoder(0); err == nil {
		t.Error("NewDecoder(0): no error")
	}
	d, err := m.NewDecoder(2)
	if err != nil {
		t.Fatal(err)
	}
	d.Feed(0, make([]int32, cfg.MaxLen+1))
	if _, err := d.Step(); err == nil {
		t.Error("overflowing MaxLen: no error")
	}
	d.ResetRow(0)
	d.Feed(1, []int32{int32(cfg.Vocab)})
	if _, err := d.Step(); err == nil {
		t.Error("token outside the vocabulary: no error")
	}
	d.ResetRow(1)
	logits, err := d.Step()
	if err != nil || len(logits) != 2*cfg.Vocab {
		t.Errorf("empty Step: %d logits, %v", len(logits), err)
	}
}

// TestDecoderSplitPrefill checks that running long prefills apart from single tokens (the pure-Go
// backend's schedule) gives the logits of the one-graph schedule, step by step, on 8 rows where a few
// rows prefill observations while the others decode one token, then with most rows finished.
func TestDecoderSplitPrefill(t *testing.T) {
	cfg := DefaultConfig(150)
	m := mustNew(t, cfg, 5)
	rng := rand.New(rand.NewPCG(5, 6))
	const B = 8
	var decs [2]*Decoder
	for i := range decs {
		d, err := m.NewDecoder(B)
		if err != nil {
			t.Fatal(err)
		}
		d.splitPrefill = i == 1
		decs[i] = d
	}
	worst := 0.0
	for step := range 16 {
		for b := range B {
			n := 1
			switch {
			case step == 0:
				n = 10 + b
			case step >= 10 && b%4 != 0: // finished rows: nothing queued
				continue
			case (step+b)%5 == 0:
				n = 2 + rng.IntN(30)
			}
			feedEach(decs[:], b, randomIDs(rng, n, cfg.Vocab))
		}
		logits := stepEach(t, decs[:])
		worst = max(worst, maxAbsDiff(t, logits[0], logits[1]))
	}
	if worst > 1e-5 {
		t.Fatalf("split schedule differs from the one-graph schedule by %g", worst)
	}
	t.Logf("max |split − one graph| = %g", worst)
}

// TestDecoderClose: Rows reports B; Close frees the caches, is idempotent, and a Step after it fails
// instead of reading freed tensors, while the queues keep working.
func TestDecoderClose(t *testing.T) {
	m := mustNew(t, tinyConfig(), 1)
	d, err := m.NewDecoder(3)
	if err != nil {
		t.Fatal(err)
	}
	if d.Rows() != 3 {
		t.Errorf("Rows() = %d, want 3", d.Rows())
	}
	d.Feed(0, []int32{1, 2, 3})
	if _, err := d.Step(); err != nil {
		t.Fatal(err)
	}
	caches := d.caches
	d.Close()
	d.Close()
	for i, c := range caches {
		if c.Ok() {
			t.Fatalf("cache %d still alive after Close", i)
		}
	}
	d.Feed(1, []int32{4})
	if d.Len(0) != 3 || d.Len(1) != 1 {
		t.Errorf("after Close: Len %d and %d, want 3 and 1", d.Len(0), d.Len(1))
	}
	if _, err := d.Step(); err == nil {
		t.Error("Step after Close: no error")
	}
	if _, err := m.SequenceLogProbs([]int32{1, 2, 3}, 1, 3); err != nil {
		t.Errorf("the model after its decoder's Close: %v", err)
	}
}

// TestSplitShapes: the cache capacity is the next multiple of TimeBucket, or with fewShapes (the split on XLA)
// the next power of two, at least splitMinCache, capped at MaxLen either way; an execution's rows are bucketB's,
// or with fewShapes the next power of two (decoding rows at least splitMinDecodeRows), at most the decoder's.
func TestSplitShapes(t *testing.T) {
	m := mustNew(t, DefaultConfig(150), 1)
	maxLen := m.Config().MaxLen
	for _, tc := range []struct {
		need      int
		fewShapes bool
		want      int
	}{
		{1, false, 32}, {33, false, 64}, {65, false, 96}, {129, false, 160}, {maxLen, false, maxLen},
		{1, true, 128}, {33, true, 128}, {129, true, 256}, {maxLen, true, maxLen},
	} {
		d := &Decoder{m: m, fewShapes: tc.fewShapes}
		if got := d.cacheLen(tc.need); got != min(tc.want, maxLen) {
			t.Errorf("cacheLen(%d) with fewShapes %v = %d, want %d", tc.need, tc.fewShapes, got, min(tc.want, maxLen))
		}
	}
	for _, tc := range []struct {
		n, nb, bp int
		fewShapes bool
		want      int
	}{
		{1, 1, 64, false, 1}, {3, 8, 64, false, 4}, {33, 1, 64, false, 48}, {33, 1, 48, false, 48},
		{1, 1, 64, true, 8}, {1, 8, 64, true, 1}, {3, 8, 64, true, 4}, {17, 1, 64, true, 32}, {33, 12, 64, true, 64},
		{33, 1, 48, true, 48}, {2, 1, 4, true, 4},
	} {
		d := &Decoder{m: m, fewShapes: tc.fewShapes, bp: tc.bp}
		if got := d.rowBucket(tc.n, tc.nb); got != tc.want {
			t.Errorf("rowBucket(%d, %d) of %d rows with fewShapes %v = %d, want %d", tc.n, tc.nb, tc.bp, tc.fewShapes, got, tc.want)
		}
	}
}

// TestDecoderPages: a split decoder of more rows than a page (on XLA: pages of splitPageRows rows, the last one
// partly used) gives the padded decoder's logits within 1e-5 and the same lengths, row by row, across prefills,
// single tokens, a reset and finished rows, and Close closes its pages (not under -short on XLA).
func TestDecoderPages(t *testing.T) {
	if testing.Short() && !testEng().pureGo {
		t.Skip("-short on XLA: the two schedules' shapes take half a minute to compile")
	}
	cfg := DefaultConfig(150)
	m := mustNew(t, cfg, 9)
	rng := rand.New(rand.NewPCG(9, 10))
	const B = splitPageRows + splitPageRows/2 + 3
	var decs [2]*Decoder
	for i, padded := range []bool{true, false} {
		d, err := newScheduled(m, B, padded)
		if err != nil {
			t.Fatal(err)
		}
		decs[i] = d
	}
	if want := 2; !testEng().pureGo && len(decs[1].pages) != want {
		t.Fatalf("split decoder of %d rows on XLA: %d pages, want %d", B, len(decs[1].pages), want)
	}
	worst := 0.0
	for step := range 8 {
		for b := range B {
			n := 1
			switch {
			case step == 0:
				n = 3 + rng.IntN(30)
			case step == 4 && b%7 == 0: // a per-call context view
				for _, d := range decs {
					d.ResetRow(b)
				}
				n = 5
			case step > 5 && b%3 == 0: // finished
				continue
			case rng.IntN(5) == 0:
				n = 2 + rng.IntN(20)
			}
			feedEach(decs[:], b, randomIDs(rng, n, cfg.Vocab))
		}
		logits := stepEach(t, decs[:])
		worst = max(worst, maxAbsDiff(t, logits[0], logits[1]))
		for b := range B {
			if decs[0].Len(b) != decs[1].Len(b) {
				t.Fatalf("step %d row %d: Len %d split, %d padded", step, b, decs[1].Len(b), decs[0].Len(b))
			}
		}
	}
	if worst > 1e-5 {
		t.Fatalf("split decoder differs from the padded one by %g", worst)
	}
	if ex, need := decs[1].Positions(); ex < need || need == 0 {
		t.Errorf("split decoder's positions: executed %d, needed %d", ex, need)
	}
	decs[1].Close()
	if _, err := decs[1].Step(); err == nil {
		t.Error("Step after Close: no error")
	}
	t.Logf("max |split − padded| = %g", worst)
}

// feedEach feeds the same tokens to row b of every decoder.
func feedEach(decs []*Decoder, b int, ids []int32) {
	for _, d := range decs {
		d.Feed(b, ids)
	}
}

// stepEach steps every decoder and returns their logits in order.
func stepEach(t *testing.T, decs []*Decoder) [][]float32 {
	t.Helper()
	logits := make([][]float32, len(decs))
	for i, d := range decs {
		var err error
		if logits[i], err = d.Step(); err != nil {
			t.Fatal(err)
		}
	}
	return logits
}
