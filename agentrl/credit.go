package agentrl

// Section 12.2's critic-based training: the critic warm-up and train_credit's step (GRPO's loop takes it through
// its seams). The notebook shows this code, written from this file (notebooks/savedcode_test.go).

import (
	"fmt"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// WarmCritic is 12.2's critic warm-up: a critic built on a copy of base's trunk, regressed for 60 Adam steps
// (lr 1e-3, 64 episodes drawn with replacement) on the returns-to-go of base-agent episodes (three
// SampleGroups batches over tasks, seeds 0-2) under cfg's step penalty. Its Adam state is then dropped, so each
// arm that copies it starts a fresh optimizer, as the book's vopt does.
func WarmCritic(base *gomlxmodel.Model, tasks []Task, tok *Tokenizer, cfg RLConfig) (*gomlxmodel.Critic, error) {
	var warmTrajs []Trajectory
	for seed := range 3 {
		trajs, err := SampleGroups(base, nil, tasks, tok, cfg, NewRNG(uint64(seed)))
		if err != nil {
			return nil, fmt.Errorf("critic warm-up: %w", err)
		}
		warmTrajs = append(warmTrajs, trajs...)
	}
	warm := Collate(warmTrajs, tok.PadID)
	warmReturns := ReturnsToGo(PerCallRewards(warmTrajs, warm.Mask(), cfg.Reward.StepPenalty), warm.Mask())
	critic, err := gomlxmodel.NewCritic(base, 1)
	if err != nil {
		return nil, err
	}
	gen := NewRNG(1)
	for range 60 {
		idx := make([]int, 64)
		for i := range idx {
			idx[i] = gen.IntN(len(warmTrajs))
		}
		returns := SelectRows(warmReturns, idx)
		if _, err := ValueStep(critic, warm.Select(idx), returns, returns, 0, 1e-3); err != nil {
			return nil, fmt.Errorf("critic warm-up: %w", err)
		}
	}
	critic.ResetOptimizer() // the warm-up's Adam stays behind: each arm's critic starts a fresh one
	return critic, nil
}

// CreditAdvantages is train_credit's step as GRPO's advantage seam (with WithCritic): token-level ("token") or
// turn-level ("turn") GAE advantages with λ = Lambda from the run's critic, on per-call rewards (the step penalty
// on every call, the verdict on the last), whitened over the batch's policy tokens; the critic then takes one
// regression step (lr 1e-3) on the batch's returns-to-go, which the policy's update does not read. A run whose
// reward has terms beyond the step penalty (FreeCalls, WrongSubmit, InvalidPenalty, Unsubmitted) is refused at its
// first step: per-call rewards do not hold them.
type CreditAdvantages struct {
	Scheme string
	Lambda float64
}

// Check returns an error unless the scheme is "token" or "turn" and λ is in [0, 1].
func (c CreditAdvantages) Check() error {
	if c.Scheme != "token" && c.Scheme != "turn" {
		return fmt.Errorf("credit advantages: scheme %q, want \"token\" or \"turn\"", c.Scheme)
	}
	if !(c.Lambda >= 0 && c.Lambda <= 1) {
		return fmt.Errorf("credit advantages: lambda %g, want a number in [0, 1]", c.Lambda)
	}
	return nil
}

// Advantages is one step of train_credit's advantage computation, and the critic's regression step.
func (c CreditAdvantages) Advantages(s StepBatch) ([][]float32, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if s.Critic == nil {
		return nil, fmt.Errorf("credit advantages: the run has no critic: pass WithCritic(WarmCritic(...))")
	}
	if r := s.Cfg.Reward; r.FreeCalls != 0 || r.WrongSubmit != 0 || r.InvalidPenalty != 0 || r.Unsubmitted != 0 {
		return nil, fmt.Errorf("credit advantages: per-call rewards hold the step penalty and the verdict only, "+
			"not this reward's other terms (%+v)", r)
	}
	mask, rewards := s.Batch.Mask(), PerCallRewards(s.Trajs, s.Batch.Mask(), s.Cfg.Reward.StepPenalty)
	values, err := CriticValues(s.Critic, s.Batch) // [B][T-1]
	if err != nil {
		return nil, err
	}
	var adv [][]float32
	if c.Scheme == "token" {
		adv, _ = GAEAdvantages(rewards, values, mask, 1, c.Lambda)
	} else {
		adv = TurnAdvantages(rewards, values, mask, s.Batch.Turns(), 1, c.Lambda)
	}
	if _, err := ValueStep(s.Critic, s.Batch, values, ReturnsToGo(rewards, mask), 0, 1e-3); err != nil {
		return nil, err
	}
	return MaskedWhiten(adv, mask), nil
}
