package gomlxmodel

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // graph code reads like math
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// This file builds the incremental decoding graph: n new tokens per row attend to the KV cache and
// to each other, and the logits of each row's last new token are returned with the new keys and
// values, which the Decoder writes into the cache on the host.
//
// Caches per layer: keys [B, H, L, dh] and values transposed, [B, H, dh, L], so that both attention
// products contract their last axis (SimpleGo then does not transpose the cache). The graph only
// reads the cache: SimpleGo has no DynamicUpdateSlice, and writing a few entries on the host (into
// buffers shared with the backend) is cheaper than rewriting the cache in the graph. Attention over
// cached keys j < start and over new keys i' ≤ i is one softmax computed in two parts.

const kindDecode = "decode"

// buildDecode: weights, caches (keys then values, per layer), tokens [B, n] int32, start [B] int32
// (tokens already cached per row), count [B] int32 (new tokens per row, ≤ n) → logits [B, V] at
// each row's last new token (undefined where count is 0), then per layer the new keys and values,
// [B, H, n, dh] each.
func buildDecode(cfg Config) func([]*Node) []*Node {
	c := arch{cfg, false}
	P := len(policySpecs(cfg))
	return func(in []*Node) []*Node {
		caches := in[P : P+2*c.Layers]
		return decode(c, unpackWeights(c, in[:P]), caches, in[P+2*c.Layers], in[P+2*c.Layers+1], in[P+2*c.Layers+2])
	}
}

const kindDecodeRows = "decode_rows"

// buildDecodeRows is buildDecode for a subset of the cache's rows: after the inputs of buildDecode
// comes rows [R] int32, the cache row of each of the R rows of tokens, start and count; the outputs
// are those of buildDecode for the R rows.
func buildDecodeRows(cfg Config) func([]*Node) []*Node {
	c := arch{cfg, false}
	P := len(policySpecs(cfg))
	return func(in []*Node) []*Node {
		rows := InsertAxes(in[P+2*c.Layers+3], -1)
		caches := make([]*Node, 2*c.Layers)
		for i, cache := range in[P : P+2*c.Layers] {
			caches[i] = Gather(cache, rows)
		}
		return decode(c, unpackWeights(c, in[:P]), caches, in[P+2*c.Layers], in[P+2*c.Layers+1], in[P+2*c.Layers+2])
	}
}

// decode is the decoding step of B rows whose caches are given: tokens [B, n], start [B], count [B].
func decode(c arch, w weights, caches []*Node, tokens, start, count *Node) []*Node {
	B, n := tokens.Shape().Dimensions[0], tokens.Shape().Dimensions[1]
	L := caches[0].Shape().Dimensions[2]
	H, dh, D := c.Heads, c.DModel/c.Heads, c.DModel
	g := tokens.Graph()
	i32 := func(dims ...int) shapes.Shape { return shapes.Make(dtypes.Int32, dims...) }
	zero, masked := ScalarZero(g, dtypes.Float32), Scalar(g, dtypes.Float32, maskValue)

	// Embeddings of the new tokens at positions start+i (clamped for padding slots).
	pos := MinScalar(Add(Iota(g, i32(B, n), 1), InsertAxes(start, -1)), c.MaxLen-1)
	x := Add(Gather(w.tok, InsertAxes(tokens, -1)), Gather(w.pos, InsertAxes(pos, -1)))
	x = Reshape(x, B*n, D)

	// Cached keys j < start[b] are visible to every new token of row b; new key i' to query i ≥ i'.
	cached := LessThan(Iota(g, i32(B, L), 1), InsertAxes(start, -1))
	oldBias := Where(cached, BroadcastToDims(zero, B, L), BroadcastToDims(masked, B, L))
	oldBias = BroadcastToDims(Reshape(oldBias, B, 1, 1, L), B, H, n, L)
	newBias := Where(GreaterOrEqual(Iota(g, i32(n, n), 0), Iota(g, i32(n, n), 1)),
		BroadcastToDims(zero, n, n), BroadcastToDims(masked, n, n))
	newBias = BroadcastPrefix(newBias, B, H)

	heads := func(x *Node) *Node { // [B·n, D] → [B, H, n, dh]
		return TransposeAllAxes(Reshape(x, B, n, H, dh), 0, 2, 1, 3)
	}
	var newKV []*Node
	for l, p := range w.layers {
		h := layerNorm(x, p[0], p[1])
		q := heads(MulScalar(c.dense(h, p[2], p[3]), 1/math.Sqrt(float64(dh))))
		k, v := heads(c.dense(h, p[4], p[5])), heads(c.dense(h, p[6], p[7]))
		newKV = append(newKV, k, v)
		batch := []int{0, 1}
		sOld := Add(DotGeneral(q, []int{3}, batch, caches[2*l], []int{3}, batch), oldBias) // [B, H, n, L]
		sNew := Add(DotGeneral(q, []int{3}, batch, k, []int{3}, batch), newBias)           // [B, H, n, n]
		m := StopGradient(Max(ReduceAndKeep(sOld, ReduceMax, -1), ReduceAndKeep(sNew, ReduceMax, -1)))
		eOld, eNew := Exp(Sub(sOld, m)), Exp(Sub(sNew, m))
		sum := Add(ReduceAndKeep(eOld, ReduceSum, -1), ReduceAndKeep(eNew, ReduceSum, -1))
		att := Add(DotGeneral(eOld, []int{3}, batch, caches[2*l+1], []int{3}, batch),
			DotGeneral(eNew, []int{3}, batch, v, []int{2}, batch)) // [B, H, n, dh]
		att = Reshape(TransposeAllAxes(Div(att, sum), 0, 2, 1, 3), B*n, D)
		x = Add(x, c.dense(att, p[8], p[9]))
		h = layerNorm(x, p[10], p[11])
		x = Add(x, c.dense(gelu(c.dense(h, p[12], p[13])), p[14], p[15]))
	}

	// The last new token of each row: a one-hot product over i (exact).
	last := ConvertDType(Equal(Iota(g, i32(B, n), 1), InsertAxes(AddScalar(count, -1), -1)), dtypes.Float32)
	xLast := DotGeneral(last, []int{1}, []int{0}, Reshape(x, B, n, D), []int{1}, []int{0}) // [B, D]
	logits := c.dense(layerNorm(xLast, w.lnfG, w.lnfB), w.headW, w.headB)
	return append([]*Node{logits}, newKV...)
}
