package agentrl

import (
	"errors"
	"fmt"
	"math"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// Loss aggregation modes of RLConfig.LossMode (the book's loss_mode).
const (
	// TokenMean averages the per-token loss over every policy token of the batch.
	TokenMean = gomlxmodel.TokenMean
	// SeqMeanTokenMean averages over each sequence's policy tokens, then over sequences.
	SeqMeanTokenMean = gomlxmodel.SeqMeanTokenMean
)

// RewardSpec names a reward function: a kind ("hidden": the hidden-test verdict) and its shaping terms.
// It is plain data, so a configuration that holds it can be hashed into a cache key.
type RewardSpec struct {
	Kind           string  // "hidden"
	StepPenalty    float64 // charged per call beyond FreeCalls
	FreeCalls      int     `json:",omitempty"` // calls not charged (ours; omitted from cache keys when 0)
	WrongSubmit    float64 // added to a submission that fails the hidden tests (e.g. -1)
	InvalidPenalty float64 // charged per malformed or unknown call
	Unsubmitted    float64 `json:",omitempty"` // added to an episode that ends unsubmitted (ours; omitted from cache keys when 0)
}

// Func builds the reward function that the spec names (arl.make_reward).
func (s RewardSpec) Func() (RewardFunc, error) {
	return MakeReward(s.Kind, RewardOptions{StepPenalty: s.StepPenalty, FreeCalls: s.FreeCalls, WrongSubmit: s.WrongSubmit,
		InvalidPenalty: s.InvalidPenalty, Unsubmitted: s.Unsubmitted})
}

// RLConfig is arl.RLConfig: the environment, sampling and update settings of one RL run.
// Start from DefaultRLConfig and change fields; Validate reports what is wrong.
type RLConfig struct {
	MaxTurns       int                    // turn budget of an episode (book default 6)
	MaxEdits       int                    // edits the env applies per episode (1)
	Reward         RewardSpec             // reward function (hidden-test verdict)
	PromptsPerStep int                    // tasks per training step (8)
	GroupSize      int                    // episodes per task, the GRPO group (8)
	Temperature    float64                // sampling temperature (1)
	LossMode       gomlxmodel.Aggregation // TokenMean or SeqMeanTokenMean
	Seed           uint64                 // seed of the run's generator (0)
	LR             float64                // Adam learning rate of the policy
	ClipEps        float64                // PPO clip range
	Epochs         int                    // passes over each batch
	Minibatches    int                    // minibatches per pass
	MaxGradNorm    float64                // global gradient-norm clip (0: none)
	// KLCoef (β; ours, 0 by default, as the book's loop shows no KL term) adds β·KL(policy ‖ anchor) per policy
	// token to the loss: the published GRPO's pull towards the policy a run started from (DeepSeekMath: β 0.04).
	// RLUpdate applies it, so every RL loop does; see gomlxmodel.Model.Anchor for the anchor.
	KLCoef float64 `json:",omitempty"`
}

// DefaultRLConfig returns the book's defaults: 6 turns, one edit, hidden-test reward, 8 tasks × 8 episodes per step,
// temperature 1, token_mean, seed 0. The update's settings are ours, since the book does not show them: the learning
// rate (7e-4), and one Adam step per batch (one minibatch, one epoch), under which the PPO clip (0.2) never acts.
// The book's update takes the run's generator, which suggests it shuffled minibatches; FINDINGS.md ("Four minibatches")
// measures that reading under six RL seeds.
func DefaultRLConfig() RLConfig {
	return RLConfig{
		MaxTurns:       6,
		MaxEdits:       1,
		Reward:         RewardSpec{Kind: "hidden"},
		PromptsPerStep: 8,
		GroupSize:      8,
		Temperature:    1,
		LossMode:       TokenMean,
		Seed:           0,
		LR:             7e-4,
		ClipEps:        0.2,
		Epochs:         1,
		Minibatches:    1,
		MaxGradNorm:    1,
	}
}

// EpisodesPerStep is PromptsPerStep × GroupSize (64 by default).
func (c RLConfig) EpisodesPerStep() int { return c.PromptsPerStep * c.GroupSize }

// Validate returns an error that names every invalid setting, or nil.
func (c RLConfig) Validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.MaxTurns < 1, "MaxTurns = %d, want >= 1", c.MaxTurns)
	check(c.MaxEdits < 0, "MaxEdits = %d, want >= 0", c.MaxEdits)
	check(c.PromptsPerStep < 1, "PromptsPerStep = %d, want >= 1", c.PromptsPerStep)
	check(c.GroupSize < 1, "GroupSize = %d, want >= 1", c.GroupSize)
	check(!(c.Temperature > 0) || math.IsInf(c.Temperature, 0), "Temperature = %g, want > 0", c.Temperature)
	check(c.LossMode != TokenMean && c.LossMode != SeqMeanTokenMean, "LossMode = %q, want %q or %q", c.LossMode, TokenMean, SeqMeanTokenMean)
	check(!(c.LR > 0) || math.IsInf(c.LR, 0), "LR = %g, want > 0", c.LR)
	check(!(c.ClipEps >= 0) || math.IsInf(c.ClipEps, 0), "ClipEps = %g, want >= 0", c.ClipEps)
	check(c.Epochs < 1, "Epochs = %d, want >= 1", c.Epochs)
	check(c.Minibatches < 1, "Minibatches = %d, want >= 1", c.Minibatches)
	check(!(c.MaxGradNorm >= 0) || math.IsInf(c.MaxGradNorm, 0), "MaxGradNorm = %g, want >= 0 (0: no clipping)", c.MaxGradNorm)
	check(!(c.KLCoef >= 0) || math.IsInf(c.KLCoef, 0), "KLCoef = %g, want >= 0 (0: no KL term)", c.KLCoef)
	if _, err := c.Reward.Func(); err != nil {
		errs = append(errs, fmt.Errorf("Reward: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid RLConfig: %w", err)
	}
	return nil
}

// EnvFactory makes a fresh environment for one episode.
type EnvFactory func() (Env, error)

// MakeEnv is arl.make_env: the BugFix edit-budget environment that cfg describes.
func MakeEnv(cfg RLConfig) (Env, error) {
	reward, err := cfg.Reward.Func()
	if err != nil {
		return nil, err
	}
	env, err := NewEditBudgetEnv(cfg.MaxTurns, reward, cfg.MaxEdits)
	if err != nil {
		return nil, err
	}
	return env, nil
}

// EnvFactoryOf returns the factory of MakeEnv(cfg).
func EnvFactoryOf(cfg RLConfig) EnvFactory {
	return func() (Env, error) { return MakeEnv(cfg) }
}
