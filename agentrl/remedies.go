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
	costAt := func(step int) RLConfig {
		stepCfg := cfg
		stepCfg.Reward.StepPenalty = cfg.Reward.StepPenalty * float64(step) / float64(max(steps-1, 1))
		return stepCfg
	}
	history, err := TrainRLSchedule(policy, tasks, tok, steps, costAt, nil)
	if err != nil {
		return nil, fmt.Errorf("train_ramped_penalty: %w", err)
	}
	return &Run{Policy: policy, History: history}, nil
}
