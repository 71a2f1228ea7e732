package agentrl

// The seams of the GRPO loop: what TrainedRun lets a caller change without copying the loop. Each one is a
// RunOption; a function it holds enters the run's key by its code (FuncCode), as TrainedRun's environment
// factory does, so that editing a reader's function trains anew while an unchanged one loads the stored run.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// StepBatch is one training step's sample as the seams see it: the episodes, the renamed task each one was
// sampled on, their collated batch, the step's configuration and the run's critic (WithCritic; nil without one).
// A seam may train the critic in place; it must not change the other fields.
type StepBatch struct {
	Step   int
	Cfg    RLConfig
	Trajs  []Trajectory
	Tasks  []Task // Tasks[i] is the renamed task of Trajs[i]
	Batch  Batch
	Critic *gomlxmodel.Critic
}

// AdvantageFunc returns the per-token advantages [B][T-1] that a step's update weighs the batch's tokens with.
type AdvantageFunc func(s StepBatch) ([][]float32, error)

// GroupAdvantages is TrainRL's advantage: each episode's group-normalized reward (ComputeAdvantages), shared by
// all its policy tokens.
func GroupAdvantages(s StepBatch) ([][]float32, error) {
	return BroadcastAdvantages(ComputeAdvantages(s.Batch.Rewards, s.Cfg.GroupSize), s.Batch.Mask()), nil
}

// MetricFunc is a per-step metric of a run (Run.Metrics), computed on the step's sample after its update.
type MetricFunc func(s StepBatch) float64

// RunOption changes what TrainedRun trains. Options are applied in order; an invalid one makes TrainedRun return
// an error before anything is keyed, loaded or printed.
type RunOption func(*runOptions) error

// runOptions are TrainedRun's seams; the zero value is the book's train_rl.
type runOptions struct {
	advantages     AdvantageFunc
	metrics        []namedMetric
	schedule       func(step int) RLConfig
	critic         *gomlxmodel.Critic
	freshOptimizer bool
	keyParts       []any // what the options add to the run's key, in the order given
}

type namedMetric struct {
	name string
	f    MetricFunc
}

// WithAdvantages replaces the step's advantages (GroupAdvantages) by f's. The update then runs on f's result,
// which must be [B][T-1] for the step's batch. f's code is part of the run's key, and so are params: the values
// f captures that its code does not show (a scheme, a λ), which must be JSON-encodable.
func WithAdvantages(f AdvantageFunc, params ...any) RunOption {
	return func(o *runOptions) error {
		if f == nil {
			return errors.New("WithAdvantages(nil): pass an AdvantageFunc, or leave the option out for GroupAdvantages")
		}
		if o.advantages != nil {
			return errors.New("WithAdvantages given twice: pass one AdvantageFunc")
		}
		code, err := FuncCode(f)
		if err != nil {
			return fmt.Errorf("WithAdvantages: %w", err)
		}
		for i, p := range params {
			if _, err := json.Marshal(p); err != nil {
				return fmt.Errorf("WithAdvantages: parameter %d (%T) cannot be keyed: %w; pass numbers, strings or structs of them", i, p, err)
			}
		}
		o.advantages = f
		o.keyParts = append(o.keyParts, "advantages", code, params)
		return nil
	}
}

// WithMetric records f of every step's sample in the run as Run.Metrics[name][step]. name must be
// non-empty and unique among the run's metrics; f's code is part of the run's key.
func WithMetric(name string, f MetricFunc) RunOption {
	return func(o *runOptions) error {
		switch {
		case strings.TrimSpace(name) == "":
			return errors.New("WithMetric: the name is empty: name the metric as the history should show it")
		case f == nil:
			return fmt.Errorf("WithMetric(%q, nil): pass the function that computes the metric", name)
		}
		for _, m := range o.metrics {
			if m.name == name {
				return fmt.Errorf("WithMetric: two metrics named %q: give each its own name", name)
			}
		}
		code, err := FuncCode(f)
		if err != nil {
			return fmt.Errorf("WithMetric(%q): %w", name, err)
		}
		o.metrics = append(o.metrics, namedMetric{name, f})
		o.keyParts = append(o.keyParts, "metric", name, code)
		return nil
	}
}

// WithSchedule trains step k with cfgAt(k) instead of TrainedRun's cfg (a curriculum, a ramped cost): its
// sampling, reward, update and, when TrainedRun's factory is nil, its environments (MakeEnv(cfgAt(k))). The run's
// generator is still seeded with TrainedRun's cfg.Seed. Every step's configuration is checked, and all of them,
// not cfgAt's code, are part of the run's key.
func WithSchedule(cfgAt func(step int) RLConfig) RunOption {
	return func(o *runOptions) error {
		if cfgAt == nil {
			return errors.New("WithSchedule(nil): pass the configuration of each step, or leave the option out")
		}
		if o.schedule != nil {
			return errors.New("WithSchedule given twice: pass one schedule")
		}
		o.schedule = cfgAt
		return nil // its key part, the configurations of all steps, is added once steps is known (scheduleKey)
	}
}

// WithCritic gives the run a critic: a copy of c, which the seams see as StepBatch.Critic and may train (an
// AdvantageFunc that bootstraps from it, and regresses it on the step's returns); the trained critic is stored
// as Run.Critic. c's weights and optimizer state are part of the run's key.
func WithCritic(c *gomlxmodel.Critic) RunOption {
	return func(o *runOptions) error {
		if c == nil {
			return errors.New("WithCritic(nil): pass a critic (gomlxmodel.NewCritic), or leave the option out")
		}
		if o.critic != nil {
			return errors.New("WithCritic given twice: pass one critic")
		}
		id, err := criticFingerprint(c)
		if err != nil {
			return fmt.Errorf("WithCritic: %w", err)
		}
		o.critic = c
		o.keyParts = append(o.keyParts, "critic", id)
		return nil
	}
}

// FreshOptimizer starts the run's policy with a fresh Adam (zero moments, step count 0), as the book's train_rl
// does, instead of the optimizer state that the base model carries. Without it a run continues base's Adam: the
// two are the same for a base agent (BaseFrom and TrainBase reset its optimizer) and differ for a policy that was
// itself trained (a Run's Policy), whose moments the run then continues.
func FreshOptimizer() RunOption {
	return func(o *runOptions) error {
		if !o.freshOptimizer {
			o.freshOptimizer = true
			o.keyParts = append(o.keyParts, "fresh_optimizer")
		}
		return nil
	}
}

// applyRunOptions applies opts in order and, for a schedule, checks the configurations of steps steps and adds
// them to the key.
func applyRunOptions(fn string, steps int, opts []RunOption) (*runOptions, error) {
	o := &runOptions{}
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("agentrl: %s: option %d is nil: leave it out", fn, i)
		}
		if err := opt(o); err != nil {
			return nil, fmt.Errorf("agentrl: %s: %w", fn, err)
		}
	}
	if o.schedule != nil && steps >= 1 {
		cfgs := make([]RLConfig, steps)
		for k := range cfgs {
			cfgs[k] = o.schedule(k)
			if err := cfgs[k].Validate(); err != nil {
				return nil, fmt.Errorf("agentrl: %s: WithSchedule: step %d: %w", fn, k, err)
			}
			if cfgs[k].GroupSize < 2 {
				return nil, fmt.Errorf("agentrl: %s: WithSchedule: step %d: GroupSize = %d, want >= 2", fn, k, cfgs[k].GroupSize)
			}
		}
		o.keyParts = append(o.keyParts, "schedule", cfgs)
	}
	return o, nil
}

// criticFingerprint is Fingerprint for a critic.
func criticFingerprint(c *gomlxmodel.Critic) (string, error) {
	h := sha256.New()
	if _, err := c.WriteTo(h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
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
