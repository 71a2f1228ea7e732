package agentrl

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// StepStats is one entry of a training history: the behavior statistics of one step's batch.
type StepStats struct {
	Step int
	Stats
}

// TrainRL is arl.train_rl, the book's GRPO loop. Each of steps steps samples cfg.PromptsPerStep renamed tasks ×
// cfg.GroupSize episodes from policy (SampleStep), turns the episode rewards into group-normalized advantages
// shared by all tokens of an episode, and applies RLUpdate. policy is trained in place; the returned history
// holds each step's behavior statistics. factory makes the environments (nil: MakeEnv(cfg)); wrap it with
// LoggedEnv to keep the terminal info of every episode. The run's generator is seeded with cfg.Seed.
func TrainRL(policy *gomlxmodel.Model, tasks []Task, tok *Tokenizer, cfg RLConfig, steps int, factory EnvFactory) ([]StepStats, error) {
	if err := checkTraining("TrainRL", tasks, cfg, steps); err != nil {
		return nil, err
	}
	return TrainRLSchedule(policy, tasks, tok, steps, func(int) RLConfig { return cfg }, factory)
}

// TrainRLSchedule is TrainRL with a configuration per step: step k samples, rewards and updates with cfgAt(k), and
// when factory is nil makes its environments with MakeEnv(cfgAt(k)). The run's generator is seeded with
// cfgAt(0).Seed. RampedPenalty is such a schedule: a step penalty ramped in over training.
func TrainRLSchedule(policy *gomlxmodel.Model, tasks []Task, tok *Tokenizer, steps int, cfgAt func(step int) RLConfig,
	factory EnvFactory) ([]StepStats, error) {
	run := &Run{Policy: policy}
	err := trainRL(run, newPCG(cfgAt(0).Seed), tasks, tok, steps, cfgAt, factory, &runOptions{}, false, nil)
	return run.History, err
}

// trainRL runs steps len(run.History) to steps-1 of a TrainRLSchedule run on run.Policy, drawing from src and
// appending to run.History; o holds the seams (advantages, metrics, critic: run.Critic); with logEpisodes every
// episode's terminal info is appended to run.Log, and its task's index to run.LogTask; res saves its progress. A nil factory makes each step's
// environments with MakeEnv(cfgAt(step)).
func trainRL(run *Run, src *rand.PCG, tasks []Task, tok *Tokenizer, steps int, cfgAt func(step int) RLConfig,
	factory EnvFactory, o *runOptions, logEpisodes bool, res *resumer) error {
	rng := rand.New(src)
	advantages := o.advantages
	if advantages == nil {
		advantages = GroupAdvantages
	}
	prog := res.progress("train_rl", steps).resumeAt(len(run.History))
	for step := len(run.History); step < steps; step++ {
		cfg := cfgAt(step)
		stepFactory := factory
		if logEpisodes {
			if stepFactory == nil {
				stepFactory = EnvFactoryOf(cfg)
			}
			stepFactory = loggedTasks(stepFactory, run)
		}
		t0 := time.Now()
		trajs, stepTasks, err := SampleStep(run.Policy, stepFactory, tasks, tok, cfg, rng)
		if err != nil {
			return fmt.Errorf("train_rl step %d: %w", step, err)
		}
		t1 := time.Now()
		sb := StepBatch{Step: step, Cfg: cfg, Trajs: trajs, Tasks: stepTasks, Batch: Collate(trajs, tok.PadID), Critic: run.Critic}
		adv, err := advantages(sb)
		if err == nil {
			err = checkAdvantages(adv, sb.Batch)
		}
		if err != nil {
			return fmt.Errorf("train_rl step %d: %w", step, err)
		}
		if _, err := RLUpdate(run.Policy, sb.Batch, adv, cfg, rng); err != nil {
			return fmt.Errorf("train_rl step %d: %w", step, err)
		}
		s := BehaviorStats(trajs)
		run.History = append(run.History, StepStats{Step: step, Stats: s})
		for _, m := range o.metrics {
			if run.Metrics == nil {
				run.Metrics = make(map[string][]float64, len(o.metrics))
			}
			run.Metrics[m.name] = append(run.Metrics[m.name], m.f(sb))
		}
		prog.Done(step, fmt.Sprintf("pass %.2f reward %+.2f turns %.2f | sample %.1fs update %.1fs",
			s.PassRate, s.Reward, s.Turns, t1.Sub(t0).Seconds(), time.Since(t1).Seconds()))
		if err := res.stepDone(step, steps, func() *checkpoint {
			return &checkpoint{Step: step + 1, RNG: pcgState(src), Run: run}
		}); err != nil {
			return fmt.Errorf("train_rl: %w", err)
		}
	}
	return nil
}

// TrainedRun is a stored TrainRL run: it trains a copy of base for steps steps with cfg on tasks, logging the
// terminal info of every episode, or loads the identical run from store. The run's key holds base's
// fingerprint, the tasks, the vocabulary, cfg, steps, envName (a label, which may be empty), the code of
// factory (FuncCode: a factory written in a notebook cell keys on the cell program's code that it reaches, so
// editing the environment it makes trains anew) and what opts add (each option says what); a nil factory means
// MakeEnv(cfg). Every argument is checked before anything is keyed, loaded or printed. An interrupted run saves
// its progress and, run again, resumes bit-identically (ErrInterrupted).
//
// opts are the loop's seams: WithAdvantages (another advantage or return computation), WithMetric (a per-step
// metric in the history), WithSchedule (a configuration per step), WithCritic (a critic the seams train) and
// FreshOptimizer (a fresh Adam; without it the run continues the optimizer state base carries, see
// FreshOptimizer). Without options the run is TrainRL's.
func TrainedRun(store *Store, base *gomlxmodel.Model, tok *Tokenizer, tasks []Task, cfg RLConfig, steps int,
	envName string, factory EnvFactory, opts ...RunOption) (*Run, error) {
	if err := checkRun("TrainedRun", store, base, tok, tasks, cfg, steps); err != nil {
		return nil, err
	}
	o, err := applyRunOptions("TrainedRun", steps, opts)
	if err != nil {
		return nil, err
	}
	key, err := runKey(base, tok, tasks, cfg, steps, envName, factory, o.keyParts...)
	if err != nil {
		return nil, err
	}
	cfgAt := o.schedule
	if cfgAt == nil {
		cfgAt = func(int) RLConfig { return cfg }
		if factory == nil {
			factory = EnvFactoryOf(cfg)
		}
	}
	return cachedResumable(store, key, RunCodec(), func(res *resumer) (*Run, error) {
		run, src := &Run{}, newPCG(cfg.Seed)
		if p, saved := res.restore(); p != nil {
			run, src = p.Run, saved
		} else {
			policy, err := base.Clone()
			if err != nil {
				return nil, err
			}
			if o.freshOptimizer {
				policy.ResetOptimizer()
			}
			run.Policy = policy
			if o.critic != nil {
				if run.Critic, err = o.critic.Clone(); err != nil {
					return nil, err
				}
			}
		}
		run.Policy.SetAnchor(base) // cfg.KLCoef's reference, also after a resume
		err := trainRL(run, src, tasks, tok, steps, cfgAt, factory, o, true, res)
		return run, err
	})
}

// runKey is TrainedRun's key; extra are the options' parts, which a run without options does not have.
func runKey(base *gomlxmodel.Model, tok *Tokenizer, tasks []Task, cfg RLConfig, steps int, envName string,
	factory EnvFactory, extra ...any) (string, error) {
	var envCode string
	if factory == nil {
		envName = "make_env"
	} else {
		var err error
		if envCode, err = FuncCode(factory); err != nil {
			return "", fmt.Errorf("agentrl: TrainedRun: the environment factory: %w", err)
		}
	}
	baseID, err := Fingerprint(base)
	if err != nil {
		return "", err
	}
	parts := append([]any{baseID, tasks, tok.Itos, cfg, steps, envName, envCode}, extra...)
	return Key("train_rl", parts...), nil
}

// checkRun returns an error, naming what to change, when TrainedRun cannot run what it is asked (fn names the
// caller).
func checkRun(fn string, store *Store, base *gomlxmodel.Model, tok *Tokenizer, tasks []Task, cfg RLConfig, steps int) error {
	switch {
	case store == nil:
		return fmt.Errorf("agentrl: %s: the store is nil: open one with DefaultStore or OpenStore", fn)
	case base == nil:
		return fmt.Errorf("agentrl: %s: the base model is nil: pass the agent to train (MakeRLBase)", fn)
	case tok == nil:
		return fmt.Errorf("agentrl: %s: the tokenizer is nil: pass the chapter's (BuildTokenizer)", fn)
	}
	return checkTraining(fn, tasks, cfg, steps)
}

// checkTraining returns an error, naming what to change, for a GRPO run of steps steps with cfg on tasks that
// would be wrong or meaningless: an invalid cfg, no steps, too few tasks, or groups of one episode (whose
// group-normalized advantages are all zero, so nothing would be learned).
func checkTraining(fn string, tasks []Task, cfg RLConfig, steps int) error {
	var errs []error
	if steps < 1 {
		errs = append(errs, fmt.Errorf("steps = %d, want >= 1", steps))
	}
	if len(tasks) == 0 {
		errs = append(errs, errors.New("no tasks: pass the training tasks (MakeTasks(SplitTrain))"))
	} else if cfg.PromptsPerStep >= 1 && len(tasks) < cfg.PromptsPerStep {
		errs = append(errs, fmt.Errorf("%d tasks, want at least PromptsPerStep = %d (pass more tasks or lower PromptsPerStep)",
			len(tasks), cfg.PromptsPerStep))
	}
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	} else if cfg.GroupSize < 2 {
		errs = append(errs, fmt.Errorf("GroupSize = %d, want >= 2: GRPO normalizes each reward within its group, so a group of one episode has a zero advantage and trains nothing", cfg.GroupSize))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("agentrl: %s: %w", fn, err)
	}
	return nil
}
