package agentrl

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// RLUpdate is arl.rl_update: the clipped policy-gradient update of policy on batch, with per-token advantages
// adv [B][T-1] (use BroadcastAdvantages for sequence advantages). It makes cfg.Epochs passes over the batch in
// cfg.Minibatches minibatches of rows shuffled with rng (with the defaults, one Adam step on the whole batch),
// aggregating the loss by cfg.LossMode. With cfg.KLCoef > 0 the loss also pulls the policy towards its anchor
// (gomlxmodel.Model.Anchor: by default the weights it had at its first such update; see foldKL). It returns the
// statistics of the last minibatch.
func RLUpdate(policy *gomlxmodel.Model, batch Batch, adv [][]float32, cfg RLConfig, rng *rand.Rand) (gomlxmodel.UpdateStats, error) {
	if err := cfg.Validate(); err != nil {
		return gomlxmodel.UpdateStats{}, err
	}
	if len(adv) != batch.B {
		return gomlxmodel.UpdateStats{}, fmt.Errorf("rl update: %d advantage rows for a batch of %d", len(adv), batch.B)
	}
	loss := gomlxmodel.LossConfig{Kind: gomlxmodel.LossPPO, ClipEps: cfg.ClipEps, Aggregation: cfg.LossMode, LR: cfg.LR, MaxGradNorm: cfg.MaxGradNorm}
	flatAdv := Flatten(adv)
	if cfg.KLCoef != 0 {
		ref, err := policy.Anchor()
		if err != nil {
			return gomlxmodel.UpdateStats{}, fmt.Errorf("rl update: %w", err)
		}
		if err := foldKL(ref, batch, flatAdv, cfg.KLCoef); err != nil {
			return gomlxmodel.UpdateStats{}, fmt.Errorf("rl update: %w", err)
		}
	}
	var stats gomlxmodel.UpdateStats
	for range cfg.Epochs {
		rows := make([]int, batch.B)
		for i := range rows {
			rows[i] = i
		}
		if cfg.Minibatches > 1 {
			rows = rng.Perm(batch.B)
		}
		for m := range cfg.Minibatches {
			part := rows[m*batch.B/cfg.Minibatches : (m+1)*batch.B/cfg.Minibatches]
			if len(part) == 0 {
				continue
			}
			var err error
			if stats, err = policy.Update(updateRows(batch, flatAdv, part), loss); err != nil {
				return stats, fmt.Errorf("rl update: %w", err)
			}
		}
	}
	return stats, nil
}

// updateRows gathers the rows of batch (and of the flat advantages) into an update batch, trimmed to the
// longest selected row.
func updateRows(batch Batch, adv []float32, rows []int) gomlxmodel.UpdateBatch {
	T1 := batch.T - 1
	if len(rows) == batch.B && isIdentity(rows) {
		return gomlxmodel.UpdateBatch{B: batch.B, T: batch.T, IDs: batch.IDs, Mask: batch.ActionMask, OldLogp: batch.Logp, Adv: adv}
	}
	T := 1
	for _, r := range rows {
		for j := T1 - 1; j >= 0; j-- {
			if batch.ActionMask[r*T1+j] != 0 {
				T = max(T, j+2)
				break
			}
		}
	}
	u := gomlxmodel.UpdateBatch{B: len(rows), T: T}
	for _, r := range rows {
		u.IDs = append(u.IDs, batch.IDs[r*batch.T:r*batch.T+T]...)
		u.Mask = append(u.Mask, batch.ActionMask[r*T1:r*T1+T-1]...)
		u.OldLogp = append(u.OldLogp, batch.Logp[r*T1:r*T1+T-1]...)
		u.Adv = append(u.Adv, adv[r*T1:r*T1+T-1]...)
	}
	return u
}

func isIdentity(rows []int) bool {
	for i, r := range rows {
		if i != r {
			return false
		}
	}
	return true
}

// foldKL adds to the flat per-token advantages adv [B·(T-1)] the gradient of β·KL(policy ‖ ref), with the KL
// estimated on each sampled policy token by k3 = ρ − log ρ − 1, ρ = π_ref/π (the unbiased, non-negative estimator
// of the published GRPO): ∂k3/∂log π = 1 − ρ, so a token's advantage becomes A − β(1 − ρ), with ρ capped at 10. A
// token the policy samples more readily than ref does is pushed back (ρ < 1); one that ref prefers is pulled up.
// In the advantages it is exactly the penalty's gradient for an update whose ratio is one (the default, 1 epoch ×
// 1 minibatch) and the gradient at the sampling policy otherwise.
func foldKL(ref *gomlxmodel.Model, batch Batch, adv []float32, beta float64) error {
	refLogp, err := ref.SequenceLogProbs(batch.IDs, batch.B, batch.T)
	if err != nil {
		return fmt.Errorf("KL reference: %w", err)
	}
	for i, m := range batch.ActionMask {
		if m != 0 {
			rho := math.Exp(float64(refLogp[i] - batch.Logp[i]))
			adv[i] -= float32(beta * (1 - min(rho, 10)))
		}
	}
	return nil
}
