package agentrl

// The seams of the GRPO loop: what a GRPO run lets a caller change without copying the loop. Each one is a field
// of GRPO, set directly or by a RunOption; its value (an estimator's parameters, an environment's arguments) and
// its code name the run.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// StepBatch is one training step's sample as the seams see it: the episodes, the renamed task each one was
// sampled on, their collated batch, the step's configuration and the run's critic (GRPO.Critic; nil without one).
// A seam may train the critic in place; it must not change the other fields.
type StepBatch struct {
	Step   int
	Cfg    RLConfig
	Trajs  []Trajectory
	Tasks  []Task // Tasks[i] is the renamed task of Trajs[i]
	Batch  Batch
	Critic *gomlxmodel.Critic
}

// Advantages computes the per-token advantages [B][T-1] that a step's update weighs the batch's tokens with. A
// value of a type with this method is keyed by its fields and its code (see GRPO): write an estimator's
// parameters as its fields.
type Advantages interface {
	Advantages(s StepBatch) ([][]float32, error)
}

// AdvantageFunc is an Advantages that is a function. A function literal that captures variables cannot be keyed
// (their values are not in its code): write those as the fields of a type with an Advantages method instead.
type AdvantageFunc func(s StepBatch) ([][]float32, error)

// Advantages calls f.
func (f AdvantageFunc) Advantages(s StepBatch) ([][]float32, error) { return f(s) }

// GroupAdvantages is TrainRL's advantage: each episode's group-normalized reward (ComputeAdvantages), shared by
// all its policy tokens.
func GroupAdvantages(s StepBatch) ([][]float32, error) {
	return BroadcastAdvantages(ComputeAdvantages(s.Batch.Rewards, s.Cfg.GroupSize), s.Batch.Mask()), nil
}

// StepMetric is a per-step metric of a run, computed on the step's sample after its update.
type StepMetric interface {
	Metric(s StepBatch) float64
}

// MetricFunc is a StepMetric that is a function (a function literal must capture nothing, as for AdvantageFunc).
type MetricFunc func(s StepBatch) float64

// Metric calls f.
func (f MetricFunc) Metric(s StepBatch) float64 { return f(s) }

// Metric is a named per-step metric: Run.Metrics[Name][k] is Of's value at step k.
type Metric struct {
	Name string
	Of   StepMetric
}

// EnvMaker makes a run's environments, one per episode. A value of a type with this method is keyed by its fields
// and code: write an environment's arguments as its fields (EarlyStop). EnvFactory is one.
type EnvMaker interface {
	NewEnv() (Env, error)
}

// NewEnv calls f.
func (f EnvFactory) NewEnv() (Env, error) { return f() }

// RunOption sets a seam of a GRPO run (see GRPO's fields); an invalid one is an error before anything is loaded,
// trained or printed.
type RunOption func(*GRPO) error

// WithAdvantages replaces the step's advantages (GroupAdvantages) by a's. The update then runs on a's result,
// which must be [B][T-1] for the step's batch.
func WithAdvantages(a Advantages) RunOption {
	return func(g *GRPO) error {
		switch {
		case a == nil:
			return errors.New("WithAdvantages(nil): pass an Advantages, or leave the option out for GroupAdvantages")
		case g.Advantages != nil:
			return errors.New("WithAdvantages given twice: pass one Advantages")
		}
		if f, ok := a.(AdvantageFunc); ok && f == nil {
			return errors.New("WithAdvantages: the AdvantageFunc is nil")
		}
		g.Advantages = a
		return nil
	}
}

// WithMetric records m of every step's sample in the run as Run.Metrics[name][step]. name must be non-empty and
// unique among the run's metrics.
func WithMetric(name string, m StepMetric) RunOption {
	return func(g *GRPO) error {
		switch {
		case strings.TrimSpace(name) == "":
			return errors.New("WithMetric: the name is empty: name the metric as the history should show it")
		case m == nil:
			return fmt.Errorf("WithMetric(%q, nil): pass the metric", name)
		}
		for _, have := range g.Metrics {
			if have.Name == name {
				return fmt.Errorf("WithMetric: two metrics named %q: give each its own name", name)
			}
		}
		g.Metrics = append(g.Metrics, Metric{Name: name, Of: m})
		return nil
	}
}

// WithSchedule trains step k with cfgAt(k) instead of the run's Cfg (a curriculum, a ramped cost): its sampling,
// reward, update and, without an Env, its environments (MakeEnv(cfgAt(k))). It sets GRPO.Schedule to the
// configurations of all the run's steps (the run's Steps must be set first), which name the run; the run's
// generator is still seeded with Cfg.Seed.
func WithSchedule(cfgAt func(step int) RLConfig) RunOption {
	return func(g *GRPO) error {
		switch {
		case cfgAt == nil:
			return errors.New("WithSchedule(nil): pass the configuration of each step, or leave the option out")
		case g.Schedule != nil:
			return errors.New("WithSchedule given twice: pass one schedule")
		case g.Steps < 1:
			return fmt.Errorf("WithSchedule: the run has %d steps: set its steps first", g.Steps)
		}
		g.Schedule = make([]RLConfig, g.Steps)
		for k := range g.Schedule {
			g.Schedule[k] = cfgAt(k)
			if err := g.Schedule[k].Validate(); err != nil {
				return fmt.Errorf("WithSchedule: step %d: %w", k, err)
			}
		}
		return nil
	}
}

// WithCritic gives the run a critic: a copy of c, which the seams see as StepBatch.Critic and may train (an
// Advantages that bootstraps from it, and regresses it on the step's returns); the trained critic is stored as
// Run.Critic.
func WithCritic(c *gomlxmodel.Critic) RunOption {
	return func(g *GRPO) error {
		switch {
		case c == nil:
			return errors.New("WithCritic(nil): pass a critic (gomlxmodel.NewCritic), or leave the option out")
		case g.Critic != nil:
			return errors.New("WithCritic given twice: pass one critic")
		}
		g.Critic = c
		return nil
	}
}

// InEnv plays the run's episodes in the environments maker makes (the book's env_fn) instead of its
// configuration's own (MakeEnv); it replaces an environment set before it.
func InEnv(maker EnvMaker) RunOption {
	return func(g *GRPO) error {
		if maker == nil {
			return errors.New("InEnv(nil): pass an EnvMaker (an EnvFactory, or a value with a NewEnv method), or leave the option out")
		}
		g.Env = maker
		return nil
	}
}

// OnTasks trains on tasks instead of the run's (the chapter's training tasks); it replaces tasks set before it.
func OnTasks(tasks []Task) RunOption {
	return func(g *GRPO) error {
		if len(tasks) == 0 {
			return errors.New("OnTasks: no tasks: pass the tasks to train on, or leave the option out")
		}
		g.Tasks = tasks
		return nil
	}
}

// FreshOptimizer starts the run's policy with a fresh Adam (zero moments, step count 0), as the book's train_rl
// does, instead of the optimizer state that the base model carries (see GRPO.FreshOptimizer).
func FreshOptimizer() RunOption {
	return func(g *GRPO) error {
		g.FreshOptimizer = true
		return nil
	}
}

// With returns g with opts applied in order, or the first option's error.
func (g GRPO) With(opts ...RunOption) (GRPO, error) {
	for i, opt := range opts {
		if opt == nil {
			return g, fmt.Errorf("agentrl: run option %d is nil: leave it out", i)
		}
		if err := opt(&g); err != nil {
			return g, fmt.Errorf("agentrl: %w", err)
		}
	}
	return g, nil
}

// checkAdvantages returns an error unless adv is [B][T-1] for batch.
func checkAdvantages(adv [][]float32, batch Batch) error {
	if len(adv) != batch.B {
		return fmt.Errorf("the advantage function returned %d rows for a batch of %d episodes, want [B][T-1]", len(adv), batch.B)
	}
	for b, row := range adv {
		if len(row) != batch.T-1 {
			return fmt.Errorf("the advantage function's row %d has %d entries, want T-1 = %d", b, len(row), batch.T-1)
		}
	}
	return nil
}

// FinalValues is the critic's value of each episode's last state, the state after its last token, which
// CriticValues (one value per predicted token) stops one position before: the V(s_K) that bootstraps the return
// of an episode cut off at its turn limit. An episode as long as the critic's context has no such state in the
// model, and is an error.
func FinalValues(critic *gomlxmodel.Critic, trajs []Trajectory, padID int32) ([]float32, error) {
	if critic == nil {
		return nil, errors.New("agentrl: FinalValues: the critic is nil")
	}
	if len(trajs) == 0 {
		return nil, nil
	}
	T := 0
	for i, t := range trajs {
		if len(t.IDs) == 0 {
			return nil, fmt.Errorf("agentrl: FinalValues: episode %d has no tokens", i)
		}
		T = max(T, len(t.IDs))
	}
	T++ // one position past the longest episode, so that its last token has an output too
	ids := make([]int32, len(trajs)*T)
	for i := range ids {
		ids[i] = padID
	}
	for i, t := range trajs {
		copy(ids[i*T:], t.IDs)
	}
	v, err := critic.Values(ids, len(trajs), T)
	if err != nil {
		return nil, fmt.Errorf("agentrl: FinalValues: %w (an episode as long as the critic's context has no state after it)", err)
	}
	out := make([]float32, len(trajs))
	for i, t := range trajs {
		out[i] = v[i*(T-1)+len(t.IDs)-1]
	}
	return out, nil
}
