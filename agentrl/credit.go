package agentrl

// Section 12.2's critic-based training: the critic warm-up and train_credit. The notebook shows this code verbatim;
// notebooks/drift_test.go fails if its copy and this file drift apart.

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

// TrainCredit is train_credit: GRPO's loop on a copy of base with token-level ("token") or turn-level ("turn")
// GAE advantages from a copy of critic, per-call rewards (cfg's step penalty on every call, the verdict on the
// last), whitened over the batch's policy tokens; the critic takes one regression step (lr 1e-3) per training
// step on the batch's returns-to-go. The run's generator is seeded with cfg.Seed.
func TrainCredit(base *gomlxmodel.Model, critic *gomlxmodel.Critic, tasks []Task, tok *Tokenizer, cfg RLConfig,
	scheme string, steps int, lambda float64) (*Run, error) {
	if scheme != "token" && scheme != "turn" {
		return nil, fmt.Errorf("train_credit: scheme %q, want \"token\" or \"turn\"", scheme)
	}
	if !(lambda >= 0 && lambda <= 1) {
		return nil, fmt.Errorf("train_credit: lambda %g, want a number in [0, 1]", lambda)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	if critic, err = critic.Clone(); err != nil {
		return nil, err
	}
	rng, prog := NewRNG(cfg.Seed), NewProgress("train_credit "+scheme, steps)
	var history []StepStats
	for step := range steps {
		trajs, _, err := SampleStep(policy, nil, tasks, tok, cfg, rng)
		if err != nil {
			return nil, fmt.Errorf("train_credit step %d: %w", step, err)
		}
		batch := Collate(trajs, tok.PadID)
		mask, rewards := batch.Mask(), PerCallRewards(trajs, batch.Mask(), cfg.Reward.StepPenalty)
		values, err := CriticValues(critic, batch) // [B][T-1]
		if err != nil {
			return nil, err
		}
		var adv [][]float32
		if scheme == "token" {
			adv, _ = GAEAdvantages(rewards, values, mask, 1, lambda)
		} else {
			adv = TurnAdvantages(rewards, values, mask, batch.Turns(), 1, lambda)
		}
		if _, err := RLUpdate(policy, batch, MaskedWhiten(adv, mask), cfg, rng); err != nil {
			return nil, fmt.Errorf("train_credit step %d: %w", step, err)
		}
		if _, err := ValueStep(critic, batch, values, ReturnsToGo(rewards, mask), 0, 1e-3); err != nil {
			return nil, fmt.Errorf("train_credit step %d: %w", step, err)
		}
		stats := BehaviorStats(trajs)
		history = append(history, StepStats{Step: step, Stats: stats})
		prog.Done(step, fmt.Sprintf("pass %.2f", stats.PassRate))
	}
	return &Run{Policy: policy, Critic: critic, History: history}, nil
}

// CreditAdvantages is train_credit's step as TrainedRun's advantage seam (with WithCritic): token-level ("token")
// or turn-level ("turn") GAE advantages from the run's critic, on per-call rewards (the step penalty on every
// call, the verdict on the last), whitened over the batch's policy tokens; the critic then takes one regression
// step (lr 1e-3) on the batch's returns-to-go, which the policy's update does not read.
func CreditAdvantages(scheme string, lambda float64) (AdvantageFunc, error) {
	if scheme != "token" && scheme != "turn" {
		return nil, fmt.Errorf("credit advantages: scheme %q, want \"token\" or \"turn\"", scheme)
	}
	if !(lambda >= 0 && lambda <= 1) {
		return nil, fmt.Errorf("credit advantages: lambda %g, want a number in [0, 1]", lambda)
	}
	return func(s StepBatch) ([][]float32, error) {
		if s.Critic == nil {
			return nil, fmt.Errorf("credit advantages: the run has no critic: pass WithCritic(WarmCritic(...))")
		}
		mask, rewards := s.Batch.Mask(), PerCallRewards(s.Trajs, s.Batch.Mask(), s.Cfg.Reward.StepPenalty)
		values, err := CriticValues(s.Critic, s.Batch) // [B][T-1]
		if err != nil {
			return nil, err
		}
		var adv [][]float32
		if scheme == "token" {
			adv, _ = GAEAdvantages(rewards, values, mask, 1, lambda)
		} else {
			adv = TurnAdvantages(rewards, values, mask, s.Batch.Turns(), 1, lambda)
		}
		if _, err := ValueStep(s.Critic, s.Batch, values, ReturnsToGo(rewards, mask), 0, 1e-3); err != nil {
			return nil, err
		}
		return MaskedWhiten(adv, mask), nil
	}, nil
}
