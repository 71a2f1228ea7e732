package gomlxmodel

import "fmt"

// Shape bucketing: callers pass their true batch B and length T; graphs are compiled for padded
// shapes only, so a training run compiles a handful of executables.
//
//   - T is rounded up to a multiple of TimeBucket (capped at MaxLen);
//   - B is rounded up to a power of two up to BatchBucket, then to a multiple of BatchBucket.
//
// Padding rows and columns hold token 0 and carry zero mask and zero loss weight, and the model is
// causal, so they change no real output.
const (
	TimeBucket  = 32
	BatchBucket = 16
)

// bucketT returns the padded length for T tokens.
func bucketT(T, maxLen int) int {
	p := (T + TimeBucket - 1) / TimeBucket * TimeBucket
	return min(max(p, TimeBucket), maxLen)
}

// bucketB returns the padded batch for B rows.
func bucketB(B int) int {
	if B <= BatchBucket {
		return pow2(B)
	}
	return (B + BatchBucket - 1) / BatchBucket * BatchBucket
}

// pow2 returns the smallest power of two ≥ n (and ≥ 1).
func pow2(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// padded describes one bucketed batch of token rows.
type padded struct {
	B, T   int // true shape
	Bp, Tp int // bucketed shape
}

func newPadded(B, T, maxLen int) (padded, error) {
	if B < 1 || T < 1 {
		return padded{}, fmt.Errorf("gomlxmodel: batch shape [%d, %d] must be positive", B, T)
	}
	if T > maxLen {
		return padded{}, fmt.Errorf("gomlxmodel: length %d exceeds the model's MaxLen %d", T, maxLen)
	}
	return padded{B: B, T: T, Bp: bucketB(B), Tp: bucketT(T, maxLen)}, nil
}

// ids pads ids [B·T] to [Bp·Tp] with token 0 and returns them with the next-token targets
// [Bp·Tp] (targets[b,t] = ids[b,t+1]; 0 past the end).
func (p padded) ids(ids []int32, vocab int) (in, targets []int32, err error) {
	if len(ids) != p.B*p.T {
		return nil, nil, fmt.Errorf("gomlxmodel: %d ids for a [%d, %d] batch", len(ids), p.B, p.T)
	}
	in = make([]int32, p.Bp*p.Tp)
	targets = make([]int32, p.Bp*p.Tp)
	for b := range p.B {
		row := ids[b*p.T : (b+1)*p.T]
		for t, id := range row {
			if id < 0 || int(id) >= vocab {
				return nil, nil, fmt.Errorf("gomlxmodel: token id %d at [%d, %d] outside vocabulary of %d", id, b, t, vocab)
			}
			in[b*p.Tp+t] = id
			if t > 0 {
				targets[b*p.Tp+t-1] = id
			}
		}
	}
	return in, targets, nil
}

// pred pads a per-prediction array [B·(T-1)] to [Bp·Tp] with zeros.
func (p padded) pred(x []float32, name string) ([]float32, error) {
	if len(x) != p.B*(p.T-1) {
		return nil, fmt.Errorf("gomlxmodel: %s has %d values for a [%d, %d] batch, want %d", name, len(x), p.B, p.T, p.B*(p.T-1))
	}
	out := make([]float32, p.Bp*p.Tp)
	for b := range p.B {
		copy(out[b*p.Tp:b*p.Tp+p.T-1], x[b*(p.T-1):(b+1)*(p.T-1)])
	}
	return out, nil
}

// unpred extracts the real predictions [B·(T-1)] from a padded [Bp·Tp] output.
func (p padded) unpred(x []float32) []float32 {
	out := make([]float32, p.B*(p.T-1))
	for b := range p.B {
		copy(out[b*(p.T-1):(b+1)*(p.T-1)], x[b*p.Tp:b*p.Tp+p.T-1])
	}
	return out
}
