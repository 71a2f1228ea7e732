package agentrl

// A remedy of Section 12.7's first design problem that the book names but does not run: a step cost that ramps
// in over training. (The other remedy we run, a free allowance of calls, is RewardSpec.FreeCalls.) The 12.7
// notebook shows this code verbatim; notebooks/drift_test.go fails if its copy and this file drift apart.

import (
	"fmt"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// TrainRampedPenalty is train_rl on a copy of base with the step penalty ramped in: step k of steps charges
// cfg.Reward.StepPenalty·k/(steps−1) per call, so the first step trains on the verdict alone and the last on the
// full cost. The run's generator is seeded with cfg.Seed.
func TrainRampedPenalty(base *gomlxmodel.Model, tasks []Task, tok *Tokenizer, cfg RLConfig, steps int) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	run, rng := &Run{Policy: policy}, NewRNG(cfg.Seed)
	prog := NewProgress("train_ramped_penalty", steps)
	for step := range steps {
		stepCfg := cfg
		stepCfg.Reward.StepPenalty = cfg.Reward.StepPenalty * float64(step) / float64(max(steps-1, 1))
		trajs, _, err := SampleStep(policy, nil, tasks, tok, stepCfg, rng)
		if err != nil {
			return nil, fmt.Errorf("train_ramped_penalty step %d: %w", step, err)
		}
		batch := Collate(trajs, tok.PadID)
		adv := ComputeAdvantages(batch.Rewards, cfg.GroupSize)
		if _, err := RLUpdate(policy, batch, BroadcastAdvantages(adv, batch.Mask()), cfg, rng); err != nil {
			return nil, fmt.Errorf("train_ramped_penalty step %d: %w", step, err)
		}
		s := BehaviorStats(trajs)
		run.History = append(run.History, StepStats{Step: step, Stats: s})
		prog.Done(step, fmt.Sprintf("cost %.3f | pass %.2f reward %+.2f turns %.2f", stepCfg.Reward.StepPenalty, s.PassRate, s.Reward, s.Turns))
	}
	return run, nil
}
