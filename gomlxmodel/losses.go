package gomlxmodel

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // graph code reads like math
)

// This file builds the graphs that executors compile: forward passes, log-probabilities, the
// REINFORCE logit gradient, and the fused loss + gradient + clipping + Adam updates of the policy
// and the critic. Every graph receives the weights as its first inputs (in spec order); per-token
// arrays are [B, T] in the bucketed shape, where position t predicts token t+1.

// PyTorch's Adam defaults.
const (
	adamBeta1   = 0.9
	adamBeta2   = 0.999
	adamEpsilon = 1e-8
)

// Graph kinds: the names of the shared executors.
const (
	kindLogits      = "logits"
	kindLogProbs    = "logprobs"
	kindGradAbs     = "logit_grad_abs"
	kindPPO         = "update_ppo"
	kindReinforce   = "update_reinforce"
	kindValues      = "values"
	kindValueUpdate = "update_value"
	kindValueClip   = "update_value_clipped"
)

// perToken reshapes a [B·T] node to [B, T].
func perToken(x *Node, B, T int) *Node { return Reshape(x, B, T) }

// policyLogProbs returns the logits [B·T, V] and the log-probabilities of the targets [B, T]; with
// read positions (pk.read [B, K]), targets are those positions' and both have K columns instead of T.
func policyLogProbs(c arch, w weights, ids, targets *Node, pk *packedRows) (logits, logp *Node) {
	B, T := targets.Shape().Dimensions[0], targets.Shape().Dimensions[1]
	logits = logitsGraph(c, w, ids, pk)
	return logits, perToken(targetLogProbs(logits, Reshape(targets, B*T)), B, T)
}

// buildLogits: weights, ids [B, T] → logits [B·T, V].
func buildLogits(cfg Config) func([]*Node) []*Node {
	c := arch{Config: cfg}
	P := len(policySpecs(cfg))
	return func(in []*Node) []*Node {
		return []*Node{logitsGraph(c, unpackWeights(c, in[:P]), in[P], nil)}
	}
}

// buildLogProbs: weights, ids [B, T], targets [B, T] → log p(target) [B, T].
func buildLogProbs(cfg Config) func([]*Node) []*Node {
	c := arch{Config: cfg}
	P := len(policySpecs(cfg))
	return func(in []*Node) []*Node {
		_, logp := policyLogProbs(c, unpackWeights(c, in[:P]), in[P], in[P+1], nil)
		return []*Node{logp}
	}
}

// buildGradAbs: weights, ids, targets, weight [B, T] → Σ_v |∂L/∂logits| [B, T] for the
// REINFORCE loss L = −Σ weight·log p(target), where weight = advantage·mask/normalizer.
func buildGradAbs(cfg Config) func([]*Node) []*Node {
	c := arch{Config: cfg} // the gradient stops at the logits
	P := len(policySpecs(cfg))
	return func(in []*Node) []*Node {
		ids, targets, weight := in[P], in[P+1], in[P+2]
		B, T := ids.Shape().Dimensions[0], ids.Shape().Dimensions[1]
		logits, logp := policyLogProbs(c, unpackWeights(c, in[:P]), ids, targets, nil)
		loss := Neg(ReduceAllSum(Mul(weight, logp)))
		g := Gradient(loss, logits)[0] // [B·T, V]
		return []*Node{perToken(ReduceSum(Abs(g), -1), B, T)}
	}
}

// clipTo is min(max(x, lo), hi); GoMLX v0.26 defines no gradient for Clamp (Clip).
func clipTo(x, lo, hi *Node) *Node { return Min(Max(x, lo), hi) }

// maskedMean is Σ mask·x / max(Σ mask, 1).
func maskedMean(x, mask *Node) *Node {
	return Div(ReduceAllSum(Mul(x, mask)), MaxScalar(ReduceAllSum(mask), 1))
}

// policyLoss returns the per-token policy loss [B, T] and its statistics (clip fraction, approximate
// KL). PPO: −min(r·A, clip(r, 1−ε, 1+ε)·A) with r = exp(logp − oldLogp); REINFORCE: −A·logp.
// approxKL is the masked mean of (r − 1) − log r.
func policyLoss(kind string, logp, oldLogp, adv, mask, clipEps *Node) (loss, clipFrac, approxKL *Node) {
	logRatio := Sub(logp, oldLogp)
	ratio := Exp(logRatio)
	approxKL = maskedMean(StopGradient(Sub(AddScalar(ratio, -1), logRatio)), mask)
	if kind == kindReinforce {
		return Neg(Mul(adv, logp)), ScalarZero(logp.Graph(), dtypes.Float32), approxKL
	}
	one := OnesLike(clipEps)
	clipped := clipTo(ratio, Sub(one, clipEps), Add(one, clipEps))
	loss = Neg(Min(Mul(ratio, adv), Mul(clipped, adv)))
	outside := ConvertDType(GreaterThan(Abs(AddScalar(ratio, -1)), clipEps), dtypes.Float32)
	return loss, maskedMean(StopGradient(outside), mask), approxKL
}

// adamUpdate differentiates loss wrt the weights, clips the gradient's global norm to maxNorm
// (+Inf disables it) and takes one Adam step. It returns the new weights, then first moments, then
// second moments.
func adamUpdate(loss *Node, params, m, v []*Node, stepSize, invSqrtBC2, maxNorm *Node) []*Node {
	grads := Gradient(loss, params...)
	sq := ScalarZero(loss.Graph(), dtypes.Float32)
	for _, g := range grads {
		sq = Add(sq, ReduceAllSum(Mul(g, g)))
	}
	coef := Min(OnesLike(maxNorm), Div(maxNorm, AddScalar(Sqrt(sq), 1e-6)))
	P := len(params)
	out := make([]*Node, 3*P)
	for i, g := range grads {
		g = Mul(g, coef)
		m2 := Add(MulScalar(m[i], adamBeta1), MulScalar(g, 1-adamBeta1))
		v2 := Add(MulScalar(v[i], adamBeta2), MulScalar(Mul(g, g), 1-adamBeta2))
		denom := AddScalar(Mul(Sqrt(v2), invSqrtBC2), adamEpsilon)
		out[i] = Sub(params[i], Mul(stepSize, Div(m2, denom)))
		out[P+i], out[2*P+i] = m2, v2
	}
	return out
}

// buildPolicyUpdate: weights, m, v (3·P), ids, targets, mask, weight, oldLogp, adv [B, T], then the
// scalars stepSize, invSqrtBC2, clipEps, maxNorm, and when packed the packed rows' pos and seg [B, T]
// and read positions [B, K] → new weights, m, v, loss, clipFrac, approxKL. When packed, targets,
// mask, weight, oldLogp and adv hold the read positions' values, [B, K]. weight holds each token's
// share in the aggregated loss (token_mean or seq_mean_token_mean).
func buildPolicyUpdate(cfg Config, kind string, packed bool, chunk int) func([]*Node) []*Node {
	c := arch{cfg, true, chunk}
	P := len(policySpecs(cfg))
	return func(in []*Node) []*Node {
		params, m, v, rest := in[:P], in[P:2*P], in[2*P:3*P], in[3*P:]
		ids, targets, mask, weight, oldLogp, adv := rest[0], rest[1], rest[2], rest[3], rest[4], rest[5]
		stepSize, invSqrtBC2, clipEps, maxNorm := rest[6], rest[7], rest[8], rest[9]
		var pk *packedRows
		if packed {
			pk = &packedRows{pos: rest[10], seg: rest[11], read: rest[12]}
		}
		_, logp := policyLogProbs(c, unpackWeights(c, params), ids, targets, pk)
		perTok, clipFrac, approxKL := policyLoss(kind, logp, oldLogp, adv, mask, clipEps)
		loss := ReduceAllSum(Mul(weight, perTok))
		out := adamUpdate(loss, params, m, v, stepSize, invSqrtBC2, maxNorm)
		return append(out, loss, clipFrac, approxKL)
	}
}

// valuesGraph is the critic's forward pass: ids [B, T] → values [B, T] (or [B, K] at read positions).
func valuesGraph(c arch, w weights, ids *Node, pk *packedRows) *Node {
	B := ids.Shape().Dimensions[0]
	h := trunk(c, w, ids, pk)
	return perToken(c.dense(h, w.headW, w.headB), B, h.Shape().Dimensions[0]/B)
}

// buildValues: critic weights, ids [B, T] → values [B, T].
func buildValues(cfg Config) func([]*Node) []*Node {
	c := arch{Config: cfg}
	P := len(criticSpecs(cfg))
	return func(in []*Node) []*Node {
		return []*Node{valuesGraph(c, unpackWeights(c, in[:P]), in[P], nil)}
	}
}

// valueLoss is arl.value_loss: the masked token mean of (V − R)², or with clipping of
// max((V − R)², (V_old + clip(V − V_old, −c, c) − R)²).
func valueLoss(values, oldValues, returns, mask, clip *Node, clipped bool) *Node {
	err := Sub(values, returns)
	sq := Mul(err, err)
	if clipped {
		vc := Add(oldValues, clipTo(Sub(values, oldValues), Neg(clip), clip))
		errC := Sub(vc, returns)
		sq = Max(sq, Mul(errC, errC))
	}
	return maskedMean(sq, mask)
}

// buildValueUpdate: critic weights, m, v, ids, oldValues, returns, mask [B, T], then stepSize,
// invSqrtBC2, clip, and when packed the packed rows' pos and seg [B, T] and read positions [B, K]
// → new weights, m, v, loss. When packed, oldValues, returns and mask are [B, K] at the read positions.
func buildValueUpdate(cfg Config, clipped, packed bool, chunk int) func([]*Node) []*Node {
	c := arch{cfg, true, chunk}
	P := len(criticSpecs(cfg))
	return func(in []*Node) []*Node {
		params, m, v, rest := in[:P], in[P:2*P], in[2*P:3*P], in[3*P:]
		ids, oldValues, returns, mask := rest[0], rest[1], rest[2], rest[3]
		stepSize, invSqrtBC2, clip := rest[4], rest[5], rest[6]
		var pk *packedRows
		if packed {
			pk = &packedRows{pos: rest[7], seg: rest[8], read: rest[9]}
		}
		values := valuesGraph(c, unpackWeights(c, params), ids, pk)
		loss := valueLoss(values, oldValues, returns, mask, clip, clipped)
		noClip := Infinity(loss.Graph(), dtypes.Float32, 1)
		out := adamUpdate(loss, params, m, v, stepSize, invSqrtBC2, noClip)
		return append(out, loss)
	}
}
