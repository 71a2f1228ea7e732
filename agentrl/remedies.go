package agentrl

// A remedy of Section 12.7's first design problem that the book names but does not run: a step cost that ramps
// in over training. (The other remedy we run, a free allowance of calls, is RewardSpec.FreeCalls.) The 12.7
// notebook shows this code, written from this file (notebooks/harness/savedcode_test.go).

// RampedPenalty is the schedule of a step penalty ramped in over steps steps: step k charges
// cfg.Reward.StepPenalty·k/(steps−1) per call, so the first step trains on the verdict alone and the last on the
// full cost. A GRPO run takes it as WithSchedule(RampedPenalty(cfg, steps)).
func RampedPenalty(cfg RLConfig, steps int) func(step int) RLConfig {
	return func(step int) RLConfig {
		stepCfg := cfg
		stepCfg.Reward.StepPenalty = cfg.Reward.StepPenalty * float64(step) / float64(max(steps-1, 1))
		return stepCfg
	}
}
