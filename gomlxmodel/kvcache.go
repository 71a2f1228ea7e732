package gomlxmodel

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // graph code reads like math
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// This file builds the incremental decoding graph: n new tokens per row are appended to a KV cache
// and the logits of each row's last new token are returned.
//
// Caches per layer: keys [B, H, L, dh] and values transposed, [B, H, dh, L], so that both attention
// products contract their last axis (SimpleGo then does not transpose the cache). SimpleGo has no
// DynamicUpdateSlice: new entries are scattered with a one-hot product (exact: each output sums one
// term) and added to the cache, whose slots past each row's length are zero (the Decoder zeroes a
// row when it is reset); keys past each query's position are masked.

const kindDecode = "decode"

// buildDecode: weights, caches (keys then values, per layer), tokens [B, n] int32, start [B] int32
// (tokens already cached per row), count [B] int32 (new tokens per row, ≤ n) → logits [B, V] at
// each row's last new token (undefined where count is 0), then the updated caches.
func buildDecode(cfg Config) func([]*Node) []*Node {
	c := arch{cfg, false}
	P := len(policySpecs(cfg))
	return func(in []*Node) []*Node {
		w := unpackWeights(c, in[:P])
		caches := in[P : P+2*c.Layers]
		tokens, start, count := in[P+2*c.Layers], in[P+2*c.Layers+1], in[P+2*c.Layers+2]
		B, n := tokens.Shape().Dimensions[0], tokens.Shape().Dimensions[1]
		L := caches[0].Shape().Dimensions[2]
		H, dh, D := c.Heads, c.DModel/c.Heads, c.DModel
		g := tokens.Graph()
		i32 := func(dims ...int) shapes.Shape { return shapes.Make(dtypes.Int32, dims...) }
		start3, count3 := Reshape(start, B, 1, 1), Reshape(count, B, 1, 1)

		// Embeddings of the new tokens at positions start+i (clamped for padding slots).
		pos := MinScalar(Add(Iota(g, i32(B, n), 1), InsertAxes(start, -1)), c.MaxLen-1)
		x := Add(Gather(w.tok, InsertAxes(tokens, -1)), Gather(w.pos, InsertAxes(pos, -1)))
		x = Reshape(x, B*n, D)

		// sel[b, j, i] = 1 when new token i of row b goes to cache slot j.
		slot, newIdx := Iota(g, i32(B, L, n), 1), Iota(g, i32(B, L, n), 2)
		selB := LogicalAnd(Equal(slot, Add(newIdx, start3)), LessThan(newIdx, count3))
		sel := BroadcastToDims(InsertAxes(ConvertDType(selB, dtypes.Float32), 1), B, H, L, n)

		// Query i of row b sees keys j ≤ start[b] + i.
		key, query := Iota(g, i32(B, n, L), 2), Iota(g, i32(B, n, L), 1)
		visible := LessOrEqual(key, Add(query, start3))
		bias := Where(visible, BroadcastToDims(ScalarZero(g, dtypes.Float32), B, n, L),
			BroadcastToDims(Scalar(g, dtypes.Float32, maskValue), B, n, L))
		bias = BroadcastToDims(InsertAxes(bias, 1), B, H, n, L)

		heads := func(x *Node) *Node { // [B·n, D] → [B, H, n, dh]
			return TransposeAllAxes(Reshape(x, B, n, H, dh), 0, 2, 1, 3)
		}
		newCaches := make([]*Node, 2*c.Layers)
		for l, p := range w.layers {
			h := layerNorm(x, p[0], p[1])
			q := heads(MulScalar(c.dense(h, p[2], p[3]), 1/math.Sqrt(float64(dh))))
			k, v := heads(c.dense(h, p[4], p[5])), heads(c.dense(h, p[6], p[7]))
			kNew := DotGeneral(sel, []int{3}, []int{0, 1}, k, []int{2}, []int{0, 1}) // [B, H, L, dh]
			vNew := DotGeneral(v, []int{2}, []int{0, 1}, sel, []int{3}, []int{0, 1}) // [B, H, dh, L]
			kc := Add(caches[2*l], kNew)                                             // slots past each row's length hold zeros
			vc := Add(caches[2*l+1], vNew)
			newCaches[2*l], newCaches[2*l+1] = kc, vc
			scores := Add(DotGeneral(q, []int{3}, []int{0, 1}, kc, []int{3}, []int{0, 1}), bias) // [B, H, n, L]
			e, sum := expShifted(scores)
			att := Div(DotGeneral(e, []int{3}, []int{0, 1}, vc, []int{3}, []int{0, 1}), sum) // [B, H, n, dh]
			att = Reshape(TransposeAllAxes(att, 0, 2, 1, 3), B*n, D)
			x = Add(x, c.dense(att, p[8], p[9]))
			h = layerNorm(x, p[10], p[11])
			x = Add(x, c.dense(gelu(c.dense(h, p[12], p[13])), p[14], p[15]))
		}

		// The last new token of each row: a one-hot product over i (exact).
		last := ConvertDType(Equal(Iota(g, i32(B, n), 1), InsertAxes(AddScalar(count, -1), -1)), dtypes.Float32)
		xLast := DotGeneral(last, []int{1}, []int{0}, Reshape(x, B, n, D), []int{1}, []int{0}) // [B, D]
		logits := c.dense(layerNorm(xLast, w.lnfG, w.lnfB), w.headW, w.headB)
		return append([]*Node{logits}, newCaches...)
	}
}
