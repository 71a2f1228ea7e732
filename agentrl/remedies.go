package agentrl

// A remedy of Section 12.7's first design problem that the book names but does not run: a step cost that ramps
// in over training. (The other remedy we run, a free allowance of calls, is RewardSpec.FreeCalls.) The 12.7
// notebook shows this code verbatim; notebooks/drift_test.go fails if its copy and this file drift apart.

import (
	"fmt"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// RampedPenalty is the schedule of a step penalty ramped in over steps steps: step k charges
// cfg.Reward.StepPenalty·k/(steps−1) per call, so the first step trains on the verdict alone and the last on the
// full cost. TrainedRun takes it as WithSchedule(RampedPenalty(cfg, steps)).
func RampedPenalty(cfg RLConfig, steps int) func(step int) RLConfig {
	return func(step int) RLConfig {
		stepCfg := cfg
		stepCfg.Reward.StepPenalty = cfg.Reward.StepPenalty * float64(step) / float64(max(steps-1, 1))
		return stepCfg
	}
}

// TrainRampedPenalty is train_rl on a copy of base with the step penalty ramped in (RampedPenalty). The run's
// generator is seeded with cfg.Seed. The chapter stores this run as TrainedRun(…, WithSchedule(RampedPenalty(cfg,
// steps))), which computes the same policy and history and also logs the episodes.
func TrainRampedPenalty(base *gomlxmodel.Model, tasks []Task, tok *Tokenizer, cfg RLConfig, steps int) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	history, err := TrainRLSchedule(policy, tasks, tok, steps, RampedPenalty(cfg, steps), nil)
	if err != nil {
		return nil, fmt.Errorf("train_ramped_penalty: %w", err)
	}
	return &Run{Policy: policy, History: history}, nil
}
