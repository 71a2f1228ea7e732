package gomlxmodel

import (
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // graph code reads like math
)

// Block-causal attention for packed updates on the pure-Go backend. Causal attention over T
// positions computes a T×T score matrix and throws away its upper half. Cut the queries into chunks
// of a few positions (defaultAttentionChunk): chunk i needs only the keys of chunks 0…i. With 4 chunks, the products
// and the softmax cover 10 of 16 blocks (62.5%), with 8 chunks 36 of 64.
//
// GoMLX v0.26 differentiates Slice through Pad, which SimpleGo lacks, so the gradient is written by
// hand (the standard one of softmax attention, per chunk) with the trick of dot: q, k and v pass
// through identities whose custom gradients return dQ, dK and dV computed from dO, the gradient
// arriving at the output. The forward pass reads the inputs through StopGradient; a zero-valued
// scalar built from the identities (0·Σq + 0·Σk + 0·Σv, exactly 0 for finite inputs) links them to
// the output, so that autodiff visits their hooks.

// blockCausalAttention is softmax(q·kᵀ + bias)·v for q, k, v [Bt, T, dh] and a bias [Bt, T, T] that
// masks every key after its query (as causalBias and packedBias do), skipping the masked blocks.
// T must be a multiple of chunk. A graph that uses it may call Gradient once only: backward computes
// dQ, dK and dV from the first call's dO and returns them again to any later call, silently wrong.
func blockCausalAttention(q, k, v, bias *Node, chunk int) *Node {
	T := q.Shape().Dimensions[1]
	n := T / chunk
	rows := func(x *Node, from, to int) *Node { return Slice(x, AxisRange(), AxisRange(from, to)) }
	type queryChunk struct{ q, k, v, p, o *Node } // its queries, visible keys and values, probabilities, output
	chunks := make([]queryChunk, n)
	qs, ks, vs := StopGradient(q), StopGradient(k), StopGradient(v)
	outs := make([]*Node, n)
	for i := range chunks {
		b := &chunks[i]
		lo, hi := i*chunk, (i+1)*chunk
		b.q, b.k, b.v = rows(qs, lo, hi), rows(ks, 0, hi), rows(vs, 0, hi)
		s := Add(DotGeneral(b.q, []int{2}, []int{0}, b.k, []int{2}, []int{0}),
			Slice(bias, AxisRange(), AxisRange(lo, hi), AxisRange(0, hi))) // [Bt, chunk, hi]
		e, sum := expShifted(s)
		b.p = Div(e, sum)
		b.o = DotGeneral(b.p, []int{2}, []int{0}, b.v, []int{1}, []int{0}) // [Bt, chunk, dh]
		outs[i] = b.o
	}
	o := StopGradient(Concatenate(outs, 1))

	var dO, dQ, dK, dV *Node
	backward := func() {
		if dQ != nil {
			return
		}
		dQs := make([]*Node, n)
		dKs := make([][]*Node, n) // dKs[j]: contributions to key chunk j
		dVs := make([][]*Node, n)
		for i, b := range chunks {
			hi := (i + 1) * chunk
			dOi := rows(dO, i*chunk, hi)
			dV := DotGeneral(b.p, []int{1}, []int{0}, dOi, []int{1}, []int{0}) // Pᵀ·dO [Bt, hi, dh]
			dP := DotGeneral(dOi, []int{2}, []int{0}, b.v, []int{2}, []int{0}) // dO·vᵀ [Bt, chunk, hi]
			rowDot := ReduceAndKeep(Mul(dOi, b.o), ReduceSum, -1)              // Σ_j dP·P = dO·o
			dS := Mul(b.p, Sub(dP, rowDot))
			dQs[i] = DotGeneral(dS, []int{2}, []int{0}, b.k, []int{1}, []int{0}) // [Bt, chunk, dh]
			dK := DotGeneral(dS, []int{1}, []int{0}, b.q, []int{1}, []int{0})    // [Bt, hi, dh]
			for j := 0; j <= i; j++ {
				dKs[j] = append(dKs[j], rows(dK, j*chunk, (j+1)*chunk))
				dVs[j] = append(dVs[j], rows(dV, j*chunk, (j+1)*chunk))
			}
		}
		sumChunks := func(parts [][]*Node) *Node {
			sums := make([]*Node, n)
			for j, p := range parts {
				sums[j] = p[0]
				for _, x := range p[1:] {
					sums[j] = Add(sums[j], x)
				}
			}
			return Concatenate(sums, 1)
		}
		dQ, dK, dV = Concatenate(dQs, 1), sumChunks(dKs), sumChunks(dVs)
	}
	qi := IdentityWithCustomGradient(q, func(_, _ *Node) *Node { backward(); return dQ })
	ki := IdentityWithCustomGradient(k, func(_, _ *Node) *Node { backward(); return dK })
	vi := IdentityWithCustomGradient(v, func(_, _ *Node) *Node { backward(); return dV })
	link := MulScalar(Add(Add(ReduceAllSum(qi), ReduceAllSum(ki)), ReduceAllSum(vi)), 0)
	return IdentityWithCustomGradient(Add(o, link), func(_, vo *Node) *Node {
		dO = vo
		return vo
	})
}
