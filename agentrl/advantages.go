package agentrl

import (
	"fmt"
	"math"
)

// Token-level quantities live on the predicted positions of a batch: rows [B][T-1], where index j of a row
// describes token j+1 of the episode. mask is the action mask (1 on policy tokens).

// ComputeAdvantages is arl.compute_advantages: GRPO's group-normalized advantages. rewards holds consecutive
// groups of groupSize episodes of one task; each reward becomes (r - group mean) / (group std + 1e-6), with the
// unbiased standard deviation. A group of one episode gets advantage 0. It panics if groupSize < 1.
func ComputeAdvantages(rewards []float32, groupSize int) []float32 {
	if groupSize < 1 {
		panic(fmt.Sprintf("agentrl: ComputeAdvantages with groupSize %d", groupSize))
	}
	adv := make([]float32, len(rewards))
	for start := 0; start < len(rewards); start += groupSize {
		g := rewards[start:min(start+groupSize, len(rewards))]
		var mean float64
		for _, r := range g {
			mean += float64(r)
		}
		mean /= float64(len(g))
		var ss float64
		for _, r := range g {
			ss += (float64(r) - mean) * (float64(r) - mean)
		}
		std := math.Sqrt(ss / float64(max(len(g)-1, 1)))
		for i, r := range g {
			adv[start+i] = float32((float64(r) - mean) / (std + 1e-6))
		}
	}
	return adv
}

// BroadcastAdvantages gives every policy token of row b the sequence advantage adv[b] (0 elsewhere).
func BroadcastAdvantages(adv []float32, mask [][]float32) [][]float32 {
	out := make([][]float32, len(mask))
	for b, m := range mask {
		out[b] = make([]float32, len(m))
		for j, mj := range m {
			out[b][j] = adv[b] * mj
		}
	}
	return out
}

// OutcomeRewards is arl.outcome_rewards: verdict[b] on the last policy position of row b, zero elsewhere.
func OutcomeRewards(verdict []float32, mask [][]float32) [][]float32 {
	out := make([][]float32, len(mask))
	for b, m := range mask {
		out[b] = make([]float32, len(m))
		for j := len(m) - 1; j >= 0; j-- {
			if m[j] != 0 {
				out[b][j] = verdict[b]
				break
			}
		}
	}
	return out
}

// ReturnsToGo is arl.returns_to_go: the undiscounted sum of the token rewards from each position to the end of
// its row, kept on policy positions (zero elsewhere).
func ReturnsToGo(rewards, mask [][]float32) [][]float32 {
	out := make([][]float32, len(rewards))
	for b, r := range rewards {
		out[b] = make([]float32, len(r))
		var g float32
		for j := len(r) - 1; j >= 0; j-- {
			g += r[j]
			out[b][j] = g * mask[b][j]
		}
	}
	return out
}

// MaskedMean is arl.masked_mean: Σ x·mask / Σ mask over the whole batch (0 for an empty mask).
func MaskedMean(x, mask [][]float32) float64 {
	var s, n float64
	for b := range x {
		for j := range x[b] {
			s += float64(x[b][j]) * float64(mask[b][j])
			n += float64(mask[b][j])
		}
	}
	if n == 0 {
		return 0
	}
	return s / n
}

// ExplainedVariance is 1 − Var(returns − values) / Var(returns) over the positions where mask is 1: 1 for a
// critic that predicts every return, 0 for one that predicts only their mean, negative for one worse than that.
// It is NaN when the returns do not vary (nothing to explain) or the mask is empty.
func ExplainedVariance(values, returns, mask [][]float32) float64 {
	if len(returns) == 0 {
		return math.NaN()
	}
	resid := Zeros(len(returns), len(returns[0]))
	for b := range returns {
		for j := range returns[b] {
			resid[b][j] = returns[b][j] - values[b][j]
		}
	}
	variance := func(x [][]float32) float64 {
		mean := MaskedMean(x, mask)
		var s, n float64
		for b := range x {
			for j := range x[b] {
				d := float64(x[b][j]) - mean
				s += d * d * float64(mask[b][j])
				n += float64(mask[b][j])
			}
		}
		return s / n
	}
	v := variance(returns)
	if !(v > 0) {
		return math.NaN()
	}
	return 1 - variance(resid)/v
}

// GAEAdvantages is arl.gae_advantages: generalized advantage estimation over the policy tokens of each row.
// The recursion runs over policy positions only (observation tokens are not actions): the "next" value of a
// policy token is the value at the row's next policy token, 0 after the last one. It returns the advantages
// and the value targets (advantage + value), both zero off the mask.
func GAEAdvantages(rewards, values, mask [][]float32, gamma, lambda float64) (adv, returns [][]float32) {
	adv, returns = Zeros(len(rewards), len(rewards[0])), Zeros(len(rewards), len(rewards[0]))
	for b := range rewards {
		var nextValue, nextAdv float64
		for j := len(rewards[b]) - 1; j >= 0; j-- {
			if mask[b][j] == 0 {
				continue
			}
			v := float64(values[b][j])
			delta := float64(rewards[b][j]) + gamma*nextValue - v
			a := delta + gamma*lambda*nextAdv
			adv[b][j], returns[b][j] = float32(a), float32(a+v)
			nextValue, nextAdv = v, a
		}
	}
	return adv, returns
}

// TurnAdvantages is arl.turn_advantages: GAE over calls instead of tokens. Call k of a row has reward r_k (the
// sum of its token rewards) and value V_k (the critic's value at its first token, the state before the call);
// δ_k = r_k + γ V_{k+1} − V_k with V_K = 0, A_k = δ_k + γλ A_{k+1}, and every token of call k gets A_k.
func TurnAdvantages(rewards, values, mask [][]float32, turnIDs [][]int32, gamma, lambda float64) [][]float32 {
	adv := Zeros(len(rewards), len(rewards[0]))
	for b := range rewards {
		calls := TurnCredit(rewards[b], values[b], mask[b], turnIDs[b], gamma, lambda)
		for j, m := range mask[b] {
			if m == 0 {
				continue
			}
			for _, c := range calls {
				if c.Turn == turnIDs[b][j] {
					adv[b][j] = float32(c.Advantage)
				}
			}
		}
	}
	return adv
}

// CallCredit is the turn-level credit of one call of an episode (Figure 12.1's columns).
type CallCredit struct {
	Turn      int32   // call index k
	Reward    float64 // r_k
	Value     float64 // V(s_k), the critic's value before the call
	TD        float64 // δ_k
	Advantage float64 // A_k (unwhitened)
}

// TurnCredit computes the per-call rewards, values, TD errors and turn-level advantages of one row.
func TurnCredit(rewards, values, mask []float32, turnIDs []int32, gamma, lambda float64) []CallCredit {
	var calls []CallCredit
	for j, m := range mask {
		if m == 0 {
			continue
		}
		if len(calls) == 0 || calls[len(calls)-1].Turn != turnIDs[j] {
			calls = append(calls, CallCredit{Turn: turnIDs[j], Value: float64(values[j])})
		}
		calls[len(calls)-1].Reward += float64(rewards[j])
	}
	var nextValue, nextAdv float64
	for k := len(calls) - 1; k >= 0; k-- {
		c := &calls[k]
		c.TD = c.Reward + gamma*nextValue - c.Value
		c.Advantage = c.TD + gamma*lambda*nextAdv
		nextValue, nextAdv = c.Value, c.Advantage
	}
	return calls
}
