package agentrl

import (
	"errors"
	"fmt"
	"math/rand/v2"

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
	g := GRPO{Tasks: tasks, Tok: tok, Cfg: cfg, Steps: steps}
	if factory != nil {
		g.Env = factory
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	run := &Run{Policy: policy} // policy itself, not a copy
	err := Train(g, run, NewRNG(g.Cfg.Seed), 0, nil)
	return run.History, err
}

// GRPO is train_rl as a value (a Loop): Steps steps of GRPO on a copy of the base model with Cfg on Tasks. Its
// zero seams are the book's train_rl; each one changes what a step does without a copy of the loop:
//
//   - Env makes the environments (nil: MakeEnv of the step's configuration);
//   - Advantages replaces the group advantage (GroupAdvantages) with its own;
//   - Metrics records per-step metrics in Run.Metrics;
//   - Schedule, when not nil, is the configuration of each step (a curriculum, a ramped cost; WithSchedule); the
//     run's generator is still seeded with Cfg.Seed;
//   - Critic gives the run a critic, which the seams see as StepBatch.Critic and may train (a copy of it: the
//     trained critic is Run.Critic);
//   - FreshOptimizer starts the policy with a fresh Adam, as the book's train_rl does, instead of the optimizer
//     state the base model carries (the same for a base agent, whose optimizer is reset; not for a trained policy);
//   - LogEpisodes keeps every episode's terminal info in Run.Log and its index among its step's episodes in
//     Run.LogTask.
type GRPO struct {
	Tasks          []Task
	Tok            *Tokenizer
	Cfg            RLConfig
	Steps          int
	Env            EnvMaker
	Advantages     Advantages
	Metrics        []Metric
	Schedule       []RLConfig
	Critic         *gomlxmodel.Critic
	FreshOptimizer bool
	LogEpisodes    bool
}

// Plan is g's steps and seed.
func (g GRPO) Plan() (int, uint64) { return g.Steps, g.Cfg.Seed }

// Check returns an error, naming what to change, when g cannot run or would train nothing: no tokenizer, an
// invalid configuration, no steps, too few tasks, groups of one episode, a schedule of the wrong length or with an
// invalid step, two metrics of one name.
func (g GRPO) Check() error {
	var errs []error
	if g.Tok == nil {
		errs = append(errs, errors.New("the tokenizer is nil: pass the chapter's (BuildTokenizer)"))
	}
	if err := checkTraining(g.Tasks, g.Cfg, g.Steps); err != nil {
		errs = append(errs, err)
	}
	if g.Schedule != nil && len(g.Schedule) != g.Steps {
		errs = append(errs, fmt.Errorf("the schedule has %d configurations for %d steps", len(g.Schedule), g.Steps))
	}
	for k, cfg := range g.Schedule {
		if err := checkTraining(g.Tasks, cfg, g.Steps); err != nil {
			errs = append(errs, fmt.Errorf("schedule step %d: %w", k, err))
			break
		}
	}
	if f, ok := g.Env.(EnvFactory); ok && f == nil {
		errs = append(errs, errors.New("the environment factory is nil: pass one, or leave Env nil for MakeEnv"))
	}
	if f, ok := g.Advantages.(AdvantageFunc); ok && f == nil {
		errs = append(errs, errors.New("the AdvantageFunc is nil: pass one, or leave Advantages nil for GroupAdvantages"))
	}
	names := map[string]bool{}
	for _, m := range g.Metrics {
		switch {
		case m.Name == "":
			errs = append(errs, errors.New("a metric without a name: name it as the history should show it"))
		case m.Of == nil:
			errs = append(errs, fmt.Errorf("metric %q has no function", m.Name))
		case names[m.Name]:
			errs = append(errs, fmt.Errorf("two metrics named %q: give each its own name", m.Name))
		}
		names[m.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("agentrl: GRPO: %w", err)
	}
	return nil
}

// Start copies base (and the critic) for the run, with a fresh optimizer when g.FreshOptimizer.
func (g GRPO) Start(base *gomlxmodel.Model) (*Run, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	if g.FreshOptimizer {
		policy.ResetOptimizer()
	}
	run := &Run{Policy: policy}
	if g.Critic != nil {
		if run.Critic, err = g.Critic.Clone(); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// cfgAt is the configuration of step step.
func (g GRPO) cfgAt(step int) RLConfig {
	if g.Schedule != nil {
		return g.Schedule[step]
	}
	return g.Cfg
}

// Step is one step of train_rl: sample the step's episodes, compute their advantages, update the policy, record
// the step's statistics (and metrics).
func (g GRPO) Step(run *Run, step int, rng *rand.Rand) error {
	if run.Base != nil {
		run.Policy.SetAnchor(run.Base) // cfg.KLCoef's reference, also after a resume
	}
	cfg := g.cfgAt(step)
	factory := EnvFactoryOf(cfg)
	if g.Env != nil {
		factory = g.Env.NewEnv
	}
	if g.LogEpisodes {
		factory = loggedTasks(factory, run)
	}
	trajs, stepTasks, err := SampleStep(run.Policy, factory, g.Tasks, g.Tok, cfg, rng)
	if err != nil {
		return err
	}
	sb := StepBatch{Step: step, Cfg: cfg, Trajs: trajs, Tasks: stepTasks, Batch: Collate(trajs, g.Tok.PadID), Critic: run.Critic}
	var advantages Advantages = AdvantageFunc(GroupAdvantages)
	if g.Advantages != nil {
		advantages = g.Advantages
	}
	adv, err := advantages.Advantages(sb)
	if err == nil {
		err = checkAdvantages(adv, sb.Batch)
	}
	if err != nil {
		return err
	}
	if _, err := RLUpdate(run.Policy, sb.Batch, adv, cfg, rng); err != nil {
		return err
	}
	run.History = append(run.History, StepStats{Step: step, Stats: BehaviorStats(trajs)})
	for _, m := range g.Metrics {
		if run.Metrics == nil {
			run.Metrics = make(map[string][]float64, len(g.Metrics))
		}
		run.Metrics[m.Name] = append(run.Metrics[m.Name], m.Of.Metric(sb))
	}
	return nil
}

// checkTraining returns an error, naming what to change, for a GRPO run of steps steps with cfg on tasks that
// would be wrong or meaningless: an invalid cfg, no steps, too few tasks, or groups of one episode (whose
// group-normalized advantages are all zero, so nothing would be learned).
func checkTraining(tasks []Task, cfg RLConfig, steps int) error {
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
	return errors.Join(errs...)
}
