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
	c := arch{Config: cfg}
	P := len(policySpecs(cfg))
	return func(in []*Node) []*Node {
		caches := in[P : P+2*c.Layers]
		return decode(c, unpackWeights(c, in[:P]), caches, in[P+2*c.Layers], in[P+2*c.Layers+1], in[P+2*c.Layers+2], false)
	}
}

const kindDecodeRows = "decode_rows"

// buildDecodeRows is buildDecode for a subset of the cache's rows: after the inputs of buildDecode
// comes rows [R] int32, the cache row of each of the R rows of tokens, start and count; the outputs
// are those of buildDecode for the R rows. Its last block computes only each row's last new token
// (see decode): this graph runs the long prefills of observations, whose other outputs nobody reads.
func buildDecodeRows(cfg Config) func([]*Node) []*Node {
	c := arch{Config: cfg}
	P := len(policySpecs(cfg))
	return func(in []*Node) []*Node {
		rows := InsertAxes(in[P+2*c.Layers+3], -1)
		caches := make([]*Node, 2*c.Layers)
		for i, cache := range in[P : P+2*c.Layers] {
			caches[i] = Gather(cache, rows)
		}
		return decode(c, unpackWeights(c, in[:P]), caches, in[P+2*c.Layers], in[P+2*c.Layers+1], in[P+2*c.Layers+2], true)
	}
}

// decode is the decoding step of B rows whose caches are given: tokens [B, n], start [B], count [B].
// With lastOnly, the last block computes its queries, attention and MLP only at each row's last new
// token, the only one whose output the logits read; it still computes every new token's keys and
// values, which the cache needs.
func decode(c arch, w weights, caches []*Node, tokens, start, count *Node, lastOnly bool) []*Node {
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
	oldRow := Where(cached, BroadcastToDims(zero, B, L), BroadcastToDims(masked, B, L))
	oldBias := BroadcastToDims(Reshape(oldRow, B, 1, 1, L), B, H, n, L)
	newBias := Where(GreaterOrEqual(Iota(g, i32(n, n), 0), Iota(g, i32(n, n), 1)),
		BroadcastToDims(zero, n, n), BroadcastToDims(masked, n, n))
	newBias = BroadcastPrefix(newBias, B, H)

	heads := func(x *Node) *Node { // [B·n, D] → [B, H, n, dh]
		return TransposeAllAxes(Reshape(x, B, n, H, dh), 0, 2, 1, 3)
	}
	// attend is softmax over the cached keys and the new ones of q [B, H, nq, dh]·keys, times values:
	// [B·nq, D]. It is one softmax computed in two parts.
	attend := func(q, kOld, vOld, k, v, oldBias, newBias *Node) *Node {
		nq := q.Shape().Dimensions[2]
		batch := []int{0, 1}
		sOld := Add(DotGeneral(q, []int{3}, batch, kOld, []int{3}, batch), oldBias) // [B, H, nq, L]
		sNew := Add(DotGeneral(q, []int{3}, batch, k, []int{3}, batch), newBias)    // [B, H, nq, n]
		m := StopGradient(Max(ReduceAndKeep(sOld, ReduceMax, -1), ReduceAndKeep(sNew, ReduceMax, -1)))
		eOld, eNew := Exp(Sub(sOld, m)), Exp(Sub(sNew, m))
		sum := Add(ReduceAndKeep(eOld, ReduceSum, -1), ReduceAndKeep(eNew, ReduceSum, -1))
		att := Add(DotGeneral(eOld, []int{3}, batch, vOld, []int{3}, batch),
			DotGeneral(eNew, []int{3}, batch, v, []int{2}, batch)) // [B, H, nq, dh]
		return Reshape(TransposeAllAxes(Div(att, sum), 0, 2, 1, 3), B*nq, D)
	}
	mlp := func(x *Node, p []*Node) *Node {
		h := layerNorm(x, p[10], p[11])
		return Add(x, c.dense(gelu(c.dense(h, p[12], p[13])), p[14], p[15]))
	}
	scale := 1 / math.Sqrt(float64(dh))
	var newKV []*Node
	for l, p := range w.layers {
		h := layerNorm(x, p[0], p[1])
		if lastOnly && l == len(w.layers)-1 {
			k, v := heads(c.dense(h, p[4], p[5])), heads(c.dense(h, p[6], p[7]))
			newKV = append(newKV, k, v)
			// Row b's last new token sits at b·n + count[b] − 1 of the B·n (slots without tokens: any).
			lastIdx := Add(MulScalar(Iota(g, i32(B), 0), float64(n)), MaxScalar(AddScalar(count, -1), 0))
			lastIdx = InsertAxes(lastIdx, -1)
			q := Reshape(MulScalar(c.dense(Gather(h, lastIdx), p[2], p[3]), scale), B, H, 1, dh)
			oldBias1 := BroadcastToDims(Reshape(oldRow, B, 1, 1, L), B, H, 1, L)
			visible := LessThan(Iota(g, i32(B, n), 1), InsertAxes(count, -1)) // new keys up to the last token
			newBias1 := Where(visible, BroadcastToDims(zero, B, n), BroadcastToDims(masked, B, n))
			newBias1 = BroadcastToDims(Reshape(newBias1, B, 1, 1, n), B, H, 1, n)
			xLast := Add(Gather(x, lastIdx), c.dense(attend(q, caches[2*l], caches[2*l+1], k, v, oldBias1, newBias1), p[8], p[9]))
			logits := c.dense(layerNorm(mlp(xLast, p), w.lnfG, w.lnfB), w.headW, w.headB)
			return append([]*Node{logits}, newKV...)
		}
		q := heads(MulScalar(c.dense(h, p[2], p[3]), scale))
		k, v := heads(c.dense(h, p[4], p[5])), heads(c.dense(h, p[6], p[7]))
		newKV = append(newKV, k, v)
		x = Add(x, c.dense(attend(q, caches[2*l], caches[2*l+1], k, v, oldBias, newBias), p[8], p[9]))
		x = mlp(x, p)
	}

	// The last new token of each row: a one-hot product over i (exact).
	last := ConvertDType(Equal(Iota(g, i32(B, n), 1), InsertAxes(AddScalar(count, -1), -1)), dtypes.Float32)
	xLast := DotGeneral(last, []int{1}, []int{0}, Reshape(x, B, n, D), []int{1}, []int{0}) // [B, D]
	logits := c.dense(layerNorm(xLast, w.lnfG, w.lnfB), w.headW, w.headB)
	return append([]*Node{logits}, newKV...)
}
