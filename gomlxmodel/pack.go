package gomlxmodel

import (
	"fmt"
	"slices"
)

// Sequence packing. A training batch of right-padded rows can spend most of its positions on padding:
// a base-agent batch averages 65 tokens in rows of 128, and GRPO batches waste more or less depending
// on how unequal their episodes are. On the
// pure-Go backend, where every position costs compute, the updates pack the rows end to end into
// fewer rows of the same length. Each token keeps its position inside its own sequence and attends
// only to earlier tokens of that sequence, so every term of the loss is the one the padded batch
// computes; only the order of floating-point sums changes. Rows are packed only up to the last
// position the loss reads (causal attention makes the rest irrelevant), and a row the loss does not
// read at all is dropped. XLA keeps the padded layout: there, the padding costs little and a new
// shape costs a compile.

// The loss reads only some positions: the policy's tokens, about a sixth of a base-agent batch's
// packed positions and under a third of an episode's. Every block but the last must compute all
// positions, since the last one's keys and values come from them, but the last block's queries,
// attention rows, MLP and the output head are needed only where the loss reads. Packed updates
// therefore gather those positions (K per packed row) before the last block and give the loss its
// arrays at those positions only: a base-agent update takes 0.77 s instead of 0.96 s.

// Packed rows keep the batch's bucketed length on pure Go: longer rows would take fewer positions, but
// attention costs grow with the row length (a GRPO batch with little padding took 0.99 s as 64 rows of
// 96 and 1.30 s as 32 rows of 192). On XLA, where every new shape is a compile and a wide row costs
// less than padding, packed rows are twice the bucketed length rounded up to 32 × a power of two
// (capped at the model's MaxLen), their number and the read slots climb coarse ladders (packRowLen),
// so a training run compiles a handful of shapes.

// packBucket rounds the number of packed rows up on pure Go, so a training run compiles a handful of
// shapes.
const packBucket = 4

// packRowLen is the XLA packing's row length for a bucketed length Tp: 32 × a power of two, at least
// 2·Tp, at most maxLen (and at least Tp). Its row counts climb rowLadder, its read slots powers of two.
func packRowLen(Tp, maxLen int) int {
	c := TimeBucket
	for c < 2*Tp {
		c *= 2
	}
	return max(Tp, min(c, maxLen))
}

// rowLadder rounds a number of packed rows up to XLA's ladder (packRowLen).
func rowLadder(n int) int {
	if n <= 8 {
		return max(n, 1)
	}
	top := 1 // the largest power of two below n
	for top*2 < n {
		top *= 2
	}
	step := top / 4
	return (n + step - 1) / step * step
}

// packedSeq places the first n positions of source row src at offset off of packed row dst.
type packedSeq struct{ src, dst, off, n int }

// packing maps the rows of a padded batch onto R rows of C positions.
type packing struct {
	R, C int
	seqs []packedSeq
}

// packRows packs sequences of the given lengths (0: dropped) into rows of C positions, first fit in
// decreasing order of length (ties by source row, so the layout is deterministic), and rounds the
// number of rows up: to a multiple of packBucket, or with ladder to rowLadder's.
func packRows(lens []int, C int, ladder bool) (packing, error) {
	order := make([]int, 0, len(lens))
	for src, n := range lens {
		if n > C {
			return packing{}, fmt.Errorf("gomlxmodel: sequence of %d positions does not fit a packed row of %d", n, C)
		}
		if n > 0 {
			order = append(order, src)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return lens[b] - lens[a] })
	var free []int // free positions left in each packed row
	pk := packing{C: C}
	for _, src := range order {
		n := lens[src]
		dst := slices.IndexFunc(free, func(f int) bool { return f >= n })
		if dst < 0 {
			dst = len(free)
			free = append(free, C)
		}
		pk.seqs = append(pk.seqs, packedSeq{src: src, dst: dst, off: C - free[dst], n: n})
		free[dst] -= n
	}
	if ladder {
		pk.R = rowLadder(len(free))
	} else {
		pk.R = max(1, (len(free)+packBucket-1)/packBucket*packBucket)
	}
	return pk, nil
}

// readLengths returns, for each row of a padded batch, 1 + the last position where any of the
// per-position arrays ([Bp·Tp]) is non-zero, or 0 when none is.
func readLengths(p padded, arrays ...[]float32) []int {
	lens := make([]int, p.B)
	for b := range p.B {
		for _, x := range arrays {
			for t := p.Tp - 1; t >= lens[b]; t-- {
				if x[b*p.Tp+t] != 0 {
					lens[b] = t + 1
					break
				}
			}
		}
	}
	return lens
}

// repack moves a padded per-position array [Bp·Tp] into the packed layout [R·C] (zeros elsewhere).
func repack[T int32 | float32](pk packing, p padded, x []T) []T {
	out := make([]T, pk.R*pk.C)
	for _, s := range pk.seqs {
		copy(out[s.dst*pk.C+s.off:s.dst*pk.C+s.off+s.n], x[s.src*p.Tp:s.src*p.Tp+s.n])
	}
	return out
}

// layout returns each packed position's position inside its sequence and its sequence number (the
// source row; −1 on unused positions, which then attend only to each other).
func (pk packing) layout() (pos, seg []int32) {
	pos = make([]int32, pk.R*pk.C)
	seg = make([]int32, pk.R*pk.C)
	for i := range seg {
		seg[i] = -1
	}
	for _, s := range pk.seqs {
		for t := range s.n {
			pos[s.dst*pk.C+s.off+t] = int32(t)
			seg[s.dst*pk.C+s.off+t] = int32(s.src)
		}
	}
	return pos, seg
}

// readBucket rounds the number of read positions per packed row up, for few shapes.
const readBucket = 8

// readPositions lists, for each packed row, the positions where any of read ([R·C], packed) is
// non-zero, as flat indices into the R·C positions, in K slots per row: K is the largest count rounded
// up to readBucket (with pow2Slots, to a power of two; at most C). pick holds the same indices with −1
// in unused slots; idx repeats the row's first position there, so that every index is valid.
func (pk packing) readPositions(pow2Slots bool, read ...[]float32) (idx, pick []int32, K int) {
	rows := make([][]int32, pk.R) // read positions of each packed row
	for i := range pk.R * pk.C {
		if slices.ContainsFunc(read, func(x []float32) bool { return x[i] != 0 }) {
			rows[i/pk.C] = append(rows[i/pk.C], int32(i))
		}
	}
	most := 0
	for _, r := range rows {
		most = max(most, len(r))
	}
	if pow2Slots {
		K = min(pk.C, pow2(most))
	} else {
		K = min(pk.C, max(1, (most+readBucket-1)/readBucket*readBucket))
	}
	idx, pick = make([]int32, pk.R*K), make([]int32, pk.R*K)
	for r, positions := range rows {
		copy(idx[r*K:], positions)
		copy(pick[r*K:], positions)
		for slot := r*K + len(positions); slot < (r+1)*K; slot++ {
			idx[slot], pick[slot] = int32(r*pk.C), -1
		}
	}
	return idx, pick, K
}

// pickAt returns x at the indices of pick (zero where pick is −1).
func pickAt[T int32 | float32](pick []int32, x []T) []T {
	out := make([]T, len(pick))
	for i, j := range pick {
		if j >= 0 {
			out[i] = x[j]
		}
	}
	return out
}

// updateLayout says how an update's arrays reach its graph: the shape of the token ids, the shape of
// the per-position arrays, and the extra inputs of packed graphs (pos, seg and read positions).
type updateLayout struct {
	ids, perPos []int
	extra       []any
	packed      bool
}

// packInputs, when eng's updates pack (all but the tests' padded oracle), moves the token ids of an update from the padded
// layout of p into packed rows (on XLA of packRowLen(p.Tp, maxLen) positions, else p.Tp), keeping the
// positions where any of read is non-zero, and keeps of the per-position arrays (ints and floats) only
// the positions where any of read is non-zero, K per packed row. It rewrites ids, ints and floats in
// place. Elsewhere it leaves them alone and returns p's padded shape for both. Either way it adds the
// update's positions to eng's UpdatePositions.
func (eng *Engine) packInputs(p padded, maxLen int, ids *[]int32, ints []*[]int32, floats []*[]float32, read ...[]float32) (updateLayout, error) {
	lens := readLengths(p, read...)
	needed := 0
	for _, n := range lens {
		needed += n
	}
	eng.updateNeeded.Add(int64(needed))
	if eng.sched.paddedUpdates {
		eng.updateExecuted.Add(int64(p.Bp * p.Tp))
		dims := []int{p.Bp, p.Tp}
		return updateLayout{ids: dims, perPos: dims}, nil
	}
	xla := !eng.pureGo
	C := p.Tp
	if xla {
		C = packRowLen(p.Tp, maxLen)
	}
	pk, err := packRows(lens, C, xla)
	if err != nil {
		return updateLayout{}, err
	}
	eng.updateExecuted.Add(int64(pk.R * pk.C))
	*ids = repack(pk, p, *ids)
	packedRead := make([][]float32, len(read))
	for i, x := range read {
		packedRead[i] = repack(pk, p, x)
	}
	idx, pick, K := pk.readPositions(xla, packedRead...)
	for _, x := range ints {
		*x = pickAt(pick, repack(pk, p, *x))
	}
	for _, x := range floats {
		*x = pickAt(pick, repack(pk, p, *x))
	}
	dims := []int{pk.R, pk.C}
	pos, seg := pk.layout()
	return updateLayout{
		ids:    dims,
		perPos: []int{pk.R, K},
		extra:  []any{i32Tensor(pos, dims...), i32Tensor(seg, dims...), i32Tensor(idx, pk.R, K)},
		packed: true,
	}, nil
}

// packedKind names the executor of a packed graph of the given kind.
func packedKind(kind string, packed bool) string {
	if packed {
		return kind + "_packed"
	}
	return kind
}
