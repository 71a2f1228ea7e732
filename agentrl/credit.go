package agentrl

// Section 12.2's critic-based training: the critic warm-up, train_credit's advantage computation
// (CriticAdvantages), train_credit as a loop (TrainCredit), and the same computation as a seam of GRPO's loop
// (CreditAdvantages). The notebook shows this code, written from this file (notebooks/harness/savedcode_test.go).

import (
	"errors"
	"fmt"
	"math/rand/v2"

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

// CriticAdvantages is train_credit's advantage computation on one step's episodes trajs (batch is their Collate):
// per-call rewards under stepPenalty, the critic's values, GAE at the token ("token") or the turn ("turn") level
// with γ = 1 and λ = lambda, whitened over the batch's policy tokens. It also returns what the critic's regression
// step reads: the values and the returns-to-go. It leaves the critic as it is. scheme must be "token" or "turn" and
// lambda in [0, 1] (CreditAdvantages.Check).
func CriticAdvantages(critic *gomlxmodel.Critic, trajs []Trajectory, batch Batch, stepPenalty float64,
	scheme string, lambda float64) (adv, values, returns [][]float32, err error) {
	mask, rewards := batch.Mask(), PerCallRewards(trajs, batch.Mask(), stepPenalty)
	values, err = CriticValues(critic, batch) // [B][T-1]
	if err != nil {
		return nil, nil, nil, err
	}
	if scheme == "token" {
		adv, _ = GAEAdvantages(rewards, values, mask, 1, lambda)
	} else {
		adv = TurnAdvantages(rewards, values, mask, batch.Turns(), 1, lambda)
	}
	return MaskedWhiten(adv, mask), values, ReturnsToGo(rewards, mask), nil
}

// CreditAdvantages is train_credit's step as GRPO's advantage seam (with WithCritic): token-level ("token") or
// turn-level ("turn") GAE advantages with λ = Lambda from the run's critic, on per-call rewards (the step penalty
// on every call, the verdict on the last), whitened over the batch's policy tokens; the critic then takes one
// regression step (lr 1e-3) on the batch's returns-to-go, which the policy's update does not read. A run whose
// reward has terms beyond the step penalty (FreeCalls, WrongSubmit, InvalidPenalty, Unsubmitted) is refused at its
// first step: per-call rewards do not hold them.
type CreditAdvantages struct {
	Scheme string
	Lambda float64
}

// Check returns an error unless the scheme is "token" or "turn" and λ is in [0, 1].
func (c CreditAdvantages) Check() error {
	if c.Scheme != "token" && c.Scheme != "turn" {
		return fmt.Errorf("credit advantages: scheme %q, want \"token\" or \"turn\"", c.Scheme)
	}
	if !(c.Lambda >= 0 && c.Lambda <= 1) {
		return fmt.Errorf("credit advantages: lambda %g, want a number in [0, 1]", c.Lambda)
	}
	return nil
}

// Advantages is one step of train_credit's advantage computation (CriticAdvantages), and the critic's regression
// step.
func (c CreditAdvantages) Advantages(s StepBatch) ([][]float32, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if s.Critic == nil {
		return nil, fmt.Errorf("credit advantages: the run has no critic: pass WithCritic(WarmCritic(...))")
	}
	if r := s.Cfg.Reward; r.FreeCalls != 0 || r.WrongSubmit != 0 || r.InvalidPenalty != 0 || r.Unsubmitted != 0 {
		return nil, fmt.Errorf("credit advantages: per-call rewards hold the step penalty and the verdict only, "+
			"not this reward's other terms (%+v)", r)
	}
	adv, values, returns, err := CriticAdvantages(s.Critic, s.Trajs, s.Batch, s.Cfg.Reward.StepPenalty, c.Scheme, c.Lambda)
	if err != nil {
		return nil, err
	}
	if _, err := ValueStep(s.Critic, s.Batch, values, returns, 0, 1e-3); err != nil {
		return nil, err
	}
	return adv, nil
}

// TrainCredit is train_credit as a Loop: GRPO's loop with the advantage computation swapped for a critic-based one,
// per-call rewards, critic values, GAE at the token ("token") or the turn ("turn") level with λ = Lambda,
// whitening, the same clipped update, and one critic step (lr 1e-3). The run starts from copies of the base model
// and of Critic (the warmed-up critic), with Cfg; per-call rewards hold the step penalty and the verdict only, so
// a reward with other terms is refused.
type TrainCredit struct {
	Tasks  []Task
	Tok    *Tokenizer
	Cfg    RLConfig
	Steps  int
	Scheme string
	Lambda float64
	Critic *gomlxmodel.Critic
}

// Plan is tc's steps and seed.
func (tc TrainCredit) Plan() (int, uint64) { return tc.Steps, tc.Cfg.Seed }

// Check returns an error, naming what to change, when tc cannot run.
func (tc TrainCredit) Check() error {
	var errs []error
	if err := (CreditAdvantages{Scheme: tc.Scheme, Lambda: tc.Lambda}).Check(); err != nil {
		errs = append(errs, err)
	}
	if tc.Critic == nil {
		errs = append(errs, errors.New("train_credit: the critic is nil: pass the warmed-up critic (WarmCritic)"))
	}
	if r := tc.Cfg.Reward; r.FreeCalls != 0 || r.WrongSubmit != 0 || r.InvalidPenalty != 0 || r.Unsubmitted != 0 {
		errs = append(errs, fmt.Errorf("train_credit: per-call rewards hold the step penalty and the verdict only, "+
			"not this reward's other terms (%+v)", r))
	}
	if err := (GRPO{Tasks: tc.Tasks, Tok: tc.Tok, Cfg: tc.Cfg, Steps: tc.Steps}).Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Start copies base and the critic.
func (tc TrainCredit) Start(base *gomlxmodel.Model) (*Run, error) {
	if err := tc.Check(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	critic, err := tc.Critic.Clone()
	return &Run{Policy: policy, Critic: critic}, err
}

// Step is one step of train_credit: sample the step's episodes, compute their advantages with the critic
// (CriticAdvantages), update the policy, then take the critic's regression step on the values and returns-to-go
// the advantages came from.
func (tc TrainCredit) Step(run *Run, step int, g *rand.Rand) error {
	if run.Base != nil {
		run.Policy.SetAnchor(run.Base) // cfg.KLCoef's reference, also after a resume
	}
	trajs, _, err := SampleStep(run.Policy, EnvFactoryOf(tc.Cfg), tc.Tasks, tc.Tok, tc.Cfg, g)
	if err != nil {
		return err
	}
	batch := Collate(trajs, tc.Tok.PadID)
	adv, values, returns, err := CriticAdvantages(run.Critic, trajs, batch, tc.Cfg.Reward.StepPenalty, tc.Scheme, tc.Lambda)
	if err != nil {
		return err
	}
	if _, err := RLUpdate(run.Policy, batch, adv, tc.Cfg, g); err != nil {
		return err
	}
	if _, err := ValueStep(run.Critic, batch, values, returns, 0, 1e-3); err != nil {
		return err
	}
	run.History = append(run.History, StepStats{Step: step, Stats: BehaviorStats(trajs)})
	return nil
}
