package gomlxmodel

import (
	"math"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // graph code reads like math
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// This file builds TinyAgent's graph: embeddings, pre-LN blocks with causal attention, GELU MLP,
// final LayerNorm. All matrix products go through dot, whose gradient is two DotGenerals.

const (
	lnEpsilon = 1e-5
	maskValue = -1e9 // added to masked attention scores: exp underflows to exactly 0
)

// dot contracts axis ca of a with axis cb of b. Both are rank 2 ([X, Y]) or, with batch, rank 3
// ([Bt, X, Y] with the batch on axis 0). The result is [Bt?, freeA, freeB].
//
// Its gradient is written by hand as two DotGenerals: the stock gradient of DotGeneral in GoMLX
// v0.26 materializes an [N, in, out] broadcast product (36 s per training step instead of 0.6 s).
// The trick: a and b pass through identities whose custom gradients ignore the stock value they
// receive and compute their own from v, the gradient arriving at the output, which the output's
// identity records. GoMLX visits nodes from the last created to the first, so the output's hook runs
// before the inputs' hooks; the stock gradient nodes are left unused and never executed.
// TestDotGradient checks the result against the stock gradient.
//
// A graph that uses dot may call Gradient once only: v is set by the output's hook at that call, and a
// second Gradient would build the inputs' gradients from the first call's v, silently wrong.
func dot(a *Node, ca int, b *Node, cb int, batch bool) *Node {
	o := 0
	var batchAxes []int
	if batch {
		o, batchAxes = 1, []int{0}
	}
	faA, faB := 2*o+1-ca, 2*o+1-cb // free (non-contracting, non-batch) axes
	var v *Node                    // gradient wrt the output, set by the output's hook
	ai := IdentityWithCustomGradient(a, func(_, _ *Node) *Node {
		if ca == o+1 { // a is [.., freeA, c]
			return DotGeneral(v, []int{o + 1}, batchAxes, b, []int{faB}, batchAxes)
		}
		return DotGeneral(b, []int{faB}, batchAxes, v, []int{o + 1}, batchAxes)
	})
	bi := IdentityWithCustomGradient(b, func(_, _ *Node) *Node {
		if cb == o+1 { // b is [.., freeB, c]
			return DotGeneral(v, []int{o}, batchAxes, a, []int{faA}, batchAxes)
		}
		if !batch && faA == 0 { // a is [N, c]: the weight gradient of a dense layer
			return contractRows(a, v)
		}
		return DotGeneral(a, []int{faA}, batchAxes, v, []int{o}, batchAxes)
	})
	y := DotGeneral(ai, []int{ca}, batchAxes, bi, []int{cb}, batchAxes)
	return IdentityWithCustomGradient(y, func(_, vy *Node) *Node {
		v = vy
		return vy
	})
}

// contractRows is Σ_n a[n, p]·b[n, q] for a [N, p] and b [N, q]: [p, q]. SimpleGo runs such a
// product (cross size p·q, long contraction) single-threaded and transposes both operands inside
// DotGeneral; splitting N into rowSplit chunks that form a batch, transposed explicitly, makes it
// parallel and about 2× faster on 2 cores.
func contractRows(a, b *Node) *Node {
	N, p, q := a.Shape().Dimensions[0], a.Shape().Dimensions[1], b.Shape().Dimensions[1]
	if N%rowSplit != 0 || N < 256*rowSplit {
		return DotGeneral(a, []int{0}, nil, b, []int{0}, nil)
	}
	a3 := Transpose(Reshape(a, rowSplit, N/rowSplit, p), 1, 2) // [S, p, N/S]
	b3 := Transpose(Reshape(b, rowSplit, N/rowSplit, q), 1, 2) // [S, q, N/S]
	return ReduceSum(DotGeneral(a3, []int{2}, []int{0}, b3, []int{2}, []int{0}), 0)
}

const rowSplit = 4

// dense is x·w + b for x [N, in], w [in, out], b [out]: returns [N, out].
func (c arch) dense(x, w, b *Node) *Node {
	return addRows(c.matmul(x, 1, w, 0, false), b)
}

// addRows adds b [D] to every row of x [N, D]. Broadcasting b with BroadcastPrefix (a memory copy)
// and adding equal shapes is faster in SimpleGo than implicit broadcasting.
func addRows(x, b *Node) *Node {
	return Add(x, BroadcastPrefix(b, x.Shape().Dimensions[0]))
}

// mulRows multiplies every row of x [N, D] by g [D].
func mulRows(x, g *Node) *Node {
	return Mul(x, BroadcastPrefix(g, x.Shape().Dimensions[0]))
}

// layerNorm normalizes x [N, D] over its last axis, then scales by g [D] and shifts by b [D].
func layerNorm(x, g, b *Node) *Node {
	mean := ReduceAndKeep(x, ReduceMean, -1)
	xc := Sub(x, mean)
	variance := ReduceAndKeep(Mul(xc, xc), ReduceMean, -1)
	y := Div(xc, Sqrt(AddScalar(variance, lnEpsilon))) // Rsqrt has no gradient in v0.26
	return addRows(mulRows(y, g), b)
}

// gelu is GELU in its tanh form (GPT-2's; PyTorch's nn.GELU(approximate="tanh")):
// x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))/2, computed as x·σ(2·√(2/π)·(x + 0.044715·x³)) with
// σ(y) = 1/(1 + e^(−y)): in SimpleGo Exp costs a third of Erf or Tanh.
func gelu(x *Node) *Node {
	inner := Mul(x, AddScalar(MulScalar(Mul(x, x), 0.044715), 1))
	e := Exp(MulScalar(inner, -2*math.Sqrt(2/math.Pi)))
	return Div(x, AddScalar(e, 1))
}

// arch is the configuration a graph is built for; grad says whether the graph differentiates the
// weights (forward-only graphs skip the identities of dot's gradient trick, which copy their input),
// chunk is the query chunk of block-causal attention in such graphs (0: none).
type arch struct {
	Config
	grad  bool
	chunk int
}

// matmul is dot with the gradient trick when the graph needs gradients, plain DotGeneral otherwise.
func (c arch) matmul(a *Node, ca int, b *Node, cb int, batch bool) *Node {
	if c.grad {
		return dot(a, ca, b, cb, batch)
	}
	var batchAxes []int
	if batch {
		batchAxes = []int{0}
	}
	return DotGeneral(a, []int{ca}, batchAxes, b, []int{cb}, batchAxes)
}

// weights are the graph nodes of a model's parameters, unpacked from the flat list graphs receive.
type weights struct {
	tok, pos   *Node // [V, D], [MaxLen, D]
	layers     [][]*Node
	lnfG, lnfB *Node   // [D]
	headW      *Node   // [D, V] (policy) or [D, 1] (critic)
	headB      *Node   // [V] or [1]
	all        []*Node // in spec order
}

func unpackWeights(c arch, params []*Node) weights {
	w := weights{tok: params[0], pos: params[1], all: params}
	i := 2
	for range c.Layers {
		w.layers = append(w.layers, params[i:i+numLayerParams])
		i += numLayerParams
	}
	w.lnfG, w.lnfB, w.headW, w.headB = params[i], params[i+1], params[i+2], params[i+3]
	return w
}

// packedRows, when a graph receives one, says that its rows hold several sequences end to end (see
// pack.go): pos [B, T] is each token's position inside its sequence and seg [B, T] the sequence it
// belongs to. read [B, K] lists, as flat indices into the B·T positions, the positions whose outputs
// the loss reads: the last block computes its queries only there.
type packedRows struct{ pos, seg, read *Node }

// embed returns token plus position embeddings for ids [B, T] as [B·T, D]. Positions are gathered
// with Iota (slicing the table would need Pad in its gradient, which SimpleGo lacks), or from pk.pos.
func embed(c arch, w weights, ids *Node, pk *packedRows) *Node {
	B, T := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
	g := ids.Graph()
	tok := Gather(w.tok, InsertAxes(ids, -1)) // [B, T, D]
	var x *Node
	if pk != nil {
		x = Add(tok, Gather(w.pos, InsertAxes(pk.pos, -1)))
	} else {
		pos := Gather(w.pos, InsertAxes(Iota(g, shapes.Make(dtypes.Int32, T), 0), -1)) // [T, D]
		x = Add(tok, InsertAxes(pos, 0))
	}
	return Reshape(x, B*T, c.DModel)
}

// causalBias is the additive attention mask [n, T, T]: 0 where key ≤ query, maskValue elsewhere.
func causalBias(g *Graph, n, T int) *Node {
	q := Iota(g, shapes.Make(dtypes.Int32, T, T), 0)
	k := Iota(g, shapes.Make(dtypes.Int32, T, T), 1)
	zero := ScalarZero(g, dtypes.Float32)
	masked := Scalar(g, dtypes.Float32, maskValue)
	return BroadcastPrefix(Where(GreaterOrEqual(q, k), BroadcastToDims(zero, T, T), BroadcastToDims(masked, T, T)), n)
}

// packedBias is the additive attention mask of packed rows, [B·H, T, T] for seg [B, T]: 0 where the
// key is at or before the query and in the same sequence, maskValue elsewhere.
func packedBias(c arch, seg *Node) *Node {
	B, T := seg.Shape().Dimensions[0], seg.Shape().Dimensions[1]
	return queryBias(c, seg, Iota(seg.Graph(), shapes.Make(dtypes.Int32, B, T), 1), seg)
}

// readBias is packedBias for the queries at the read positions read [B, K] (flat indices into B·T):
// [B·H, K, T].
func readBias(c arch, seg, read *Node) *Node {
	B, T := seg.Shape().Dimensions[0], seg.Shape().Dimensions[1]
	K := read.Shape().Dimensions[1]
	rowStart := MulScalar(Iota(seg.Graph(), shapes.Make(dtypes.Int32, B, K), 0), float64(T))
	qSeg := Reshape(gatherRows(Reshape(seg, B*T, 1), read), B, K)
	return queryBias(c, seg, Sub(read, rowStart), qSeg)
}

// queryBias is the additive attention mask [B·H, Tq, T] of queries at row positions qPos [B, Tq] of
// sequences qSeg [B, Tq] over the keys of rows whose sequences are seg [B, T]: 0 where the key is at
// or before the query and in the same sequence, maskValue elsewhere.
func queryBias(c arch, seg, qPos, qSeg *Node) *Node {
	B, T, Tq := seg.Shape().Dimensions[0], seg.Shape().Dimensions[1], qPos.Shape().Dimensions[1]
	g := seg.Graph()
	q := BroadcastToDims(InsertAxes(qPos, -1), B, Tq, T)
	k := Iota(g, shapes.Make(dtypes.Int32, B, Tq, T), 2)
	same := Equal(BroadcastToDims(InsertAxes(qSeg, -1), B, Tq, T), BroadcastToDims(InsertAxes(seg, 1), B, Tq, T))
	zero := BroadcastToDims(ScalarZero(g, dtypes.Float32), B, Tq, T)
	masked := BroadcastToDims(Scalar(g, dtypes.Float32, maskValue), B, Tq, T)
	bias := Where(LogicalAnd(same, GreaterOrEqual(q, k)), zero, masked)
	return Reshape(BroadcastToDims(InsertAxes(bias, 1), B, c.Heads, Tq, T), B*c.Heads, Tq, T)
}

// gatherRows returns the rows idx [B, K] (flat indices) of x [N, D]: [B·K, D].
func gatherRows(x, idx *Node) *Node {
	B, K := idx.Shape().Dimensions[0], idx.Shape().Dimensions[1]
	return Gather(x, Reshape(idx, B*K, 1))
}

// splitHeads turns [B·T, D] into [B·H, T, dh].
func splitHeads(c arch, x *Node, B, T int) *Node {
	H, dh := c.Heads, c.DModel/c.Heads
	x = TransposeAllAxes(Reshape(x, B, T, H, dh), 0, 2, 1, 3)
	return Reshape(x, B*H, T, dh)
}

// mergeHeads turns [B·H, T, dh] into [B·T, D].
func mergeHeads(c arch, x *Node, B, T int) *Node {
	H, dh := c.Heads, c.DModel/c.Heads
	x = TransposeAllAxes(Reshape(x, B, H, T, dh), 0, 2, 1, 3)
	return Reshape(x, B*T, c.DModel)
}

// expShifted returns exp(s − max) and its sum over the last axis (kept as a size-1 axis); the max
// carries no gradient.
func expShifted(s *Node) (e, sum *Node) {
	m := StopGradient(ReduceAndKeep(s, ReduceMax, -1))
	e = Exp(Sub(s, m))
	return e, ReduceAndKeep(e, ReduceSum, -1)
}

// attention is softmax(scores)·v for scores [Bt, Tq, Tk] and v [Bt, Tk, dh], normalizing after the
// product: dividing [Bt, Tq, dh] costs Tk/dh times less than dividing the probabilities.
func (c arch) attention(scores, v *Node) *Node {
	e, sum := expShifted(scores)
	return Div(c.matmul(e, 2, v, 1, true), sum)
}

// block is one pre-LN transformer block on x [B·T, D] with causal self-attention over T, or, given the
// attention bias of packed rows, over each sequence of a row. Given read [B, K] (flat indices of
// positions), it computes queries only there and returns [B·K, D]; bias must then be readBias's.
func block(c arch, p []*Node, x *Node, B, T int, bias, read *Node) *Node {
	dh := c.DModel / c.Heads
	h := layerNorm(x, p[0], p[1])
	hq, Tq := h, T
	if read != nil {
		hq, Tq = gatherRows(h, read), read.Shape().Dimensions[1]
	}
	q := splitHeads(c, MulScalar(c.dense(hq, p[2], p[3]), 1/math.Sqrt(float64(dh))), B, Tq)
	k := splitHeads(c, c.dense(h, p[4], p[5]), B, T)
	v := splitHeads(c, c.dense(h, p[6], p[7]), B, T)
	var att *Node
	if bias != nil && read == nil && c.grad && c.chunk > 0 && T%c.chunk == 0 && T > c.chunk {
		att = blockCausalAttention(q, k, v, bias, c.chunk) // packed rows in an update
	} else {
		if bias == nil {
			bias = causalBias(x.Graph(), B*c.Heads, T)
		}
		scores := Add(c.matmul(q, 2, k, 2, true), bias) // [B·H, Tq, T]
		att = c.attention(scores, v)
	}
	att = mergeHeads(c, att, B, Tq)
	if read != nil {
		x = gatherRows(x, read)
	}
	x = Add(x, c.dense(att, p[8], p[9]))
	h = layerNorm(x, p[10], p[11])
	return Add(x, c.dense(gelu(c.dense(h, p[12], p[13])), p[14], p[15]))
}

// trunk returns the final hidden states [B·T, D] for ids [B, T], packed when pk is not nil; when pk
// lists read positions, only theirs: [B·K, D]. Earlier blocks compute every position, because the
// last block's keys and values need them all; the last block's queries, MLP and the head need only
// the positions the loss reads (the policy wrote about a third of an episode's tokens).
func trunk(c arch, w weights, ids *Node, pk *packedRows) *Node {
	B, T := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
	x := embed(c, w, ids, pk)
	var bias *Node
	if pk != nil {
		bias = packedBias(c, pk.seg)
	}
	last := len(w.layers) - 1
	for i, p := range w.layers {
		if i == last && pk != nil && pk.read != nil {
			x = block(c, p, x, B, T, readBias(c, pk.seg, pk.read), pk.read)
			break
		}
		x = block(c, p, x, B, T, bias, nil)
	}
	return layerNorm(x, w.lnfG, w.lnfB)
}

// logitsGraph is the policy's forward pass: ids [B, T] → logits [B·T, V] (or [B·K, V], see trunk).
func logitsGraph(c arch, w weights, ids *Node, pk *packedRows) *Node {
	return c.dense(trunk(c, w, ids, pk), w.headW, w.headB)
}

// targetLogProbs returns log softmax(logits)[target] for logits [N, V] and targets [N] int32: [N].
func targetLogProbs(logits, targets *Node) *Node {
	V := logits.Shape().Dimensions[1]
	m := StopGradient(ReduceAndKeep(logits, ReduceMax, -1))
	shifted := Sub(logits, m)
	lse := Log(ReduceSum(Exp(shifted), -1))
	picked := ReduceSum(Mul(shifted, OneHot(targets, V, dtypes.Float32)), -1)
	return Sub(picked, lse)
}
