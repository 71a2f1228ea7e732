package gomlxmodel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func TestPackRows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lens   []int
		C      int
		ladder bool
		wantR  int
	}{
		{"empty batch", []int{0, 0}, 8, false, 1},
		{"one per row", []int{8, 8, 8}, 8, false, 4},
		{"pairs", []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4}, 8, false, 8},
		{"first fit decreasing", []int{5, 3, 6, 2, 1, 7, 0, 4}, 8, false, 4},
		{"many rows", []int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, 3, false, 16},
		{"ladder: empty batch", []int{0, 0}, 8, true, 1},
		{"ladder: one per row", []int{8, 8, 8}, 8, true, 3},
		{"ladder: nine rows", []int{8, 8, 8, 8, 8, 8, 8, 8, 8}, 8, true, 10},
		{"ladder: seventeen rows", []int{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, 8, true, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pk, err := packRows(tc.lens, tc.C, tc.ladder)
			if err != nil {
				t.Fatal(err)
			}
			if pk.R != tc.wantR || pk.C != tc.C {
				t.Errorf("packed into %d×%d, want %d×%d", pk.R, pk.C, tc.wantR, tc.C)
			}
			used := make([]bool, pk.R*pk.C)
			placed := map[int]bool{}
			for _, s := range pk.seqs {
				if s.n != tc.lens[s.src] || placed[s.src] {
					t.Errorf("sequence %+v: want length %d, placed once", s, tc.lens[s.src])
				}
				placed[s.src] = true
				if s.dst >= pk.R || s.off+s.n > pk.C {
					t.Fatalf("sequence %+v outside %d×%d", s, pk.R, pk.C)
				}
				for i := s.dst*pk.C + s.off; i < s.dst*pk.C+s.off+s.n; i++ {
					if used[i] {
						t.Fatalf("sequence %+v overlaps another", s)
					}
					used[i] = true
				}
			}
			for src, n := range tc.lens {
				if placed[src] != (n > 0) {
					t.Errorf("row %d of length %d: placed %v", src, n, placed[src])
				}
			}
		})
	}
	if _, err := packRows([]int{9}, 8, false); err == nil {
		t.Error("a sequence longer than the row: no error")
	}
}

// TestPackShapes pins XLA's packed shapes: rows of 32 × a power of two at least twice the bucketed
// length (capped at MaxLen), row counts on a ladder of four steps per doubling, read slots powers of two.
func TestPackShapes(t *testing.T) {
	for _, tc := range []struct{ Tp, maxLen, want int }{
		{32, 256, 64}, {64, 256, 128}, {96, 256, 256}, {128, 256, 256}, {256, 256, 256}, {32, 48, 48}, {64, 64, 64},
	} {
		if got := packRowLen(tc.Tp, tc.maxLen); got != tc.want {
			t.Errorf("packRowLen(%d, %d) = %d, want %d", tc.Tp, tc.maxLen, got, tc.want)
		}
	}
	var ladder []int
	for n := range 41 {
		if r := rowLadder(n); len(ladder) == 0 || ladder[len(ladder)-1] != r {
			ladder = append(ladder, r)
		}
	}
	if want := []int{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40}; !slices.Equal(ladder, want) {
		t.Errorf("row ladder %v, want %v", ladder, want)
	}
	pk := packing{R: 2, C: 8}
	read := make([]float32, 16)
	for _, i := range []int{0, 1, 2, 8} {
		read[i] = 1
	}
	if _, _, K := pk.readPositions(true, read); K != 4 {
		t.Errorf("3 read positions in a row: %d slots, want 4", K)
	}
	if _, _, K := pk.readPositions(false, read); K != 8 {
		t.Errorf("3 read positions in a row, pure Go: %d slots, want readBucket 8", K)
	}
}

// TestUpdatePositions counts an update's positions: padded, the bucketed rows; packed, the packed rows;
// needed, each sequence up to its last read position, the same under both.
func TestUpdatePositions(t *testing.T) {
	cfg := tinyConfig()
	b := raggedBatch(rand.New(rand.NewPCG(8, 9)), cfg, 12, 20)
	lc := lossConfigs(1e-3)[0]
	var got [2][2]int64
	for i, on := range []bool{false, true} {
		m := mustNew(t, cfg, 3)
		withPacking(on, []engined{m}, func() {
			e0, n0 := m.Engine().UpdatePositions()
			if _, err := m.Update(b, lc); err != nil {
				t.Fatal(err)
			}
			e, n := m.Engine().UpdatePositions()
			got[i] = [2]int64{e - e0, n - n0}
		})
	}
	padded, packed := got[0], got[1]
	if padded[1] != packed[1] || padded[1] <= 0 {
		t.Errorf("needed positions: padded %d, packed %d", padded[1], packed[1])
	}
	if want := int64(bucketB(12) * bucketT(20, cfg.MaxLen)); padded[0] != want {
		t.Errorf("padded executed %d positions, want %d", padded[0], want)
	}
	if packed[0] < packed[1] || packed[0] >= padded[0] {
		t.Errorf("packed executed %d positions for %d needed (padded %d)", packed[0], packed[1], padded[0])
	}
}

// raggedBatch is makeBatch with rows of different lengths: past a random length a row holds padding
// (token 0, zero mask), as Collate leaves it.
func raggedBatch(rng *rand.Rand, cfg Config, B, T int) UpdateBatch {
	b := makeBatch(rng, cfg, B, T)
	for r := range B {
		n := 2 + rng.IntN(T-1) // tokens in the row
		if r == 1 {
			n = 1 // a row the loss does not read
		}
		for t := n; t < T; t++ {
			b.IDs[r*T+t] = 0
		}
		for j := n - 1; j < T-1; j++ {
			if j >= 0 {
				b.Mask[r*(T-1)+j] = 0
			}
		}
	}
	return b
}

func maxAbsDiff(t *testing.T, a, b []float32) float64 {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("lengths %d and %d", len(a), len(b))
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// TestPackedUpdateMatchesPadded takes the same optimizer steps with packed and with padded rows and
// compares the statistics and the weights: packing changes only the order of floating-point sums.
// With a large learning rate a wrong position or a mask that lets sequences see each other moves
// weights by about 0.2; rounding moves them by about 1e-4 (Adam scales small gradient differences up).
func TestPackedUpdateMatchesPadded(t *testing.T) {
	cfg := tinyConfig()
	cfg.MaxLen = 64 // on XLA, packed rows of 64 positions for the batch's 32 (packRowLen)
	for _, lc := range lossConfigs(3e-2) {
		t.Run(string(lc.Kind)+"/"+string(lc.Aggregation), func(t *testing.T) {
			b := raggedBatch(rand.New(rand.NewPCG(8, 9)), cfg, 12, 20)
			var stats [2][]UpdateStats
			var models [2]*Model
			for i, on := range []bool{false, true} {
				models[i] = mustNew(t, cfg, 3)
				withPacking(on, []engined{models[i]}, func() {
					for range 3 {
						st, err := models[i].Update(b, lc)
						if err != nil {
							t.Fatal(err)
						}
						stats[i] = append(stats[i], st)
					}
				})
			}
			for s := range stats[0] {
				p, q := stats[0][s], stats[1][s]
				if math.Abs(p.Loss-q.Loss) > 1e-5 || math.Abs(p.ClipFrac-q.ClipFrac) > 1e-6 || math.Abs(p.ApproxKL-q.ApproxKL) > 1e-6 {
					t.Errorf("step %d: padded %+v, packed %+v", s, p, q)
				}
			}
			for i, w := range models[0].tensorsOf() {
				a, err := floatsCopy(w)
				if err != nil {
					t.Fatal(err)
				}
				b, err := floatsCopy(models[1].tensorsOf()[i])
				if err != nil {
					t.Fatal(err)
				}
				if d := maxAbsDiff(t, a, b); d > 1e-3 {
					t.Errorf("weight %d: packed and padded differ by %g", i, d)
				}
			}
		})
	}
}

// TestPackedCriticUpdateMatchesPadded is the same check for the critic's value loss, with and without
// clipping. Its learning rate is lower than the policy's: at 3e-2 the clipped loss's third Adam step
// turned the rounding in which the two graphs differ (XLA compiles them for the processor) into value
// differences of 1.6e-3 on one processor (AMD Zen 2); at 1e-2 they stay near 2e-5 there, while returns
// read one position off move the values by about 0.5.
func TestPackedCriticUpdateMatchesPadded(t *testing.T) {
	cfg := tinyConfig()
	rng := rand.New(rand.NewPCG(10, 11))
	b := raggedBatch(rng, cfg, 12, 20)
	returns := make([]float32, len(b.Mask))
	old := make([]float32, len(b.Mask))
	for i := range returns {
		returns[i] = float32(rng.NormFloat64())
		old[i] = returns[i] + 0.3*float32(rng.NormFloat64())
	}
	for _, clip := range []float64{0, 0.2} {
		var losses [2][]float64
		var values [2][]float32
		for i, on := range []bool{false, true} {
			c, err := NewCritic(mustNew(t, cfg, 4), 5)
			if err != nil {
				t.Fatal(err)
			}
			withPacking(on, []engined{c}, func() {
				for range 3 {
					loss, err := c.Update(b.IDs, b.B, b.T, old, returns, b.Mask, clip, 1e-2)
					if err != nil {
						t.Fatal(err)
					}
					losses[i] = append(losses[i], loss)
				}
			})
			if values[i], err = c.Values(b.IDs, b.B, b.T); err != nil {
				t.Fatal(err)
			}
		}
		for s := range losses[0] {
			if math.Abs(losses[0][s]-losses[1][s]) > 1e-5 {
				t.Errorf("clip %g, step %d: loss padded %g, packed %g", clip, s, losses[0][s], losses[1][s])
			}
		}
		if d := maxAbsDiff(t, values[0], values[1]); d > 1e-3 {
			t.Errorf("clip %g: values after packed and padded updates differ by %g", clip, d)
		}
	}
}

func TestReadPositions(t *testing.T) {
	pk := packing{R: 2, C: 4}
	for _, tc := range []struct {
		name string
		read [][]float32
		// slots per row in the table below, the read positions of each row (−1: unused slot), and K
		n     int
		picks []int32
		K     int
	}{
		{"one array", [][]float32{{0, 1, 0, 1, 1, 0, 0, 0}}, 2, []int32{1, 3, 4, -1}, 4},
		{"union of arrays", [][]float32{{1, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 2, 0, 0, 0, 0, 3}}, 2, []int32{0, 2, 7, -1}, 4},
		{"nothing read", [][]float32{{0, 0, 0, 0, 0, 0, 0, 0}}, 1, []int32{-1, -1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, pick, K := pk.readPositions(false, tc.read...)
			if K != tc.K {
				t.Fatalf("K = %d, want %d", K, tc.K)
			}
			for r := range pk.R {
				for s := range K {
					wantPick := int32(-1)
					if s < tc.n {
						wantPick = tc.picks[r*tc.n+s]
					}
					wantIdx := wantPick
					if wantPick < 0 {
						wantIdx = int32(r * pk.C) // unused slots repeat the row's first position
					}
					if idx[r*K+s] != wantIdx || pick[r*K+s] != wantPick {
						t.Errorf("row %d slot %d: index %d pick %d, want %d and %d", r, s, idx[r*K+s], pick[r*K+s], wantIdx, wantPick)
					}
				}
			}
			x := []float32{10, 11, 12, 13, 14, 15, 16, 17}
			for i, v := range pickAt(pick, x) {
				want := float32(0)
				if pick[i] >= 0 {
					want = x[pick[i]]
				}
				if v != want {
					t.Errorf("pickAt slot %d = %g, want %g", i, v, want)
				}
			}
		})
	}
}

// tensorsOf is a helper for tests: the model's weights in spec order.
func (m *Model) tensorsOf() []*tensors.Tensor { return m.st.params }
