package agentrl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// The RL base agent. The book's starting policy came from its earlier chapters (pre-training and supervised
// fine-tuning of TinyAgent); we make it here by supervised training on scripted demonstration episodes whose
// behavior mix is calibrated to the book's step-0 batch: it usually edits blind, then tests its edit in about half
// the episodes (and, when the test fails, now and then gives up and stalls instead of submitting), tests an edit
// it made after reading almost always, submits in about 72% of episodes,
// rarely reads (and then often picks the right op), and makes a malformed call in about 5% of episodes.
// Supervised learning of a sequence distribution learns its conditionals, so the trained agent reproduces the
// script's mix of call sequences; what RL later finds is the reading skill the mix hides.

// BaseConfig describes the demonstrations and the supervised training of the RL base agent.
type BaseConfig struct {
	Seed            uint64
	Demos           int       // demonstration episodes (on renamed training tasks)
	Steps           int       // Adam steps of supervised training
	BatchSize       int       // episodes per step
	LR              float64   // Adam learning rate
	MaxTurns        int       // turn budget of the demonstrations
	SubmitFirstProb float64   // the episode submits on its first call
	ReadProb        float64   // an episode starts with a read
	ReadRightProb   float64   // after a read, the edit uses the op the source needs (else a uniformly random op)
	TestsAfterEdit  []float64 // P(0, 1, 2, ... tests between the edit and the submit)
	// BlindTestsAfterEdit, when set, replaces TestsAfterEdit in episodes that did not read first.
	BlindTestsAfterEdit []float64 `json:",omitempty"`
	SubmitProb          float64   // the episode submits; otherwise it stalls until the budget runs out
	StallTestProb       float64   // a stalling call is a test; otherwise another (refused) edit
	// StallOnFailProb is the chance that an episode whose last test reported a failure stalls instead of
	// submitting: the demonstrator sometimes gives up on an edit its test showed wrong.
	StallOnFailProb float64
	MalformedProb   float64 // one malformed call is inserted at a random turn
	// MappingDemos are extra demonstrations that read, then edit with the right op. The choice to read (the
	// "read" token) carries no loss, so they teach what to do after a read without making reads more likely;
	// the rest of the read call (its closing token) is learned like any other call, so that the reads RL makes
	// common are well formed.
	MappingDemos     int
	MappingRightProb float64 // a mapping demonstration's edit uses the right op (else a random op)
	// RereadProb is the chance that an episode that reads reads the source a second time before its edit. It is 0
	// in the calibrated mix, whose base agent therefore never reads right after a read; 12.3 sets it to show where
	// the overshoot of Figure 12.2 comes from. At 0 the demonstrations' random stream is what it was without it.
	RereadProb float64 `json:",omitempty"`
}

// DefaultBaseConfig is the calibrated demonstration mix and training schedule.
func DefaultBaseConfig() BaseConfig {
	return BaseConfig{
		Seed:             3, // 1 misses the calibration gate since the read call's closing token is learned (FINDINGS.md)
		Demos:            4096,
		MappingDemos:     4096,
		MappingRightProb: 0.85,
		Steps:            400,
		BatchSize:        64,
		LR:               2e-3,
		MaxTurns:         6,
		SubmitFirstProb:  0.04,
		ReadProb:         0.04,
		ReadRightProb:    0.5,
		TestsAfterEdit:   []float64{0.05, 0.90, 0.05},
		// Half the blind edits are tested: an informed edit is checked almost always, a guess half the time. With
		// 0.90 for both, the test habit ignored what the agent had read, and RL's policies kept it under any
		// context (12.4's next-call probabilities); the book's policies lost it when the source left the view.
		BlindTestsAfterEdit: []float64{0.5, 0.5},
		SubmitProb:          0.80,
		StallTestProb:       0,
		StallOnFailProb:     0.15,
		MalformedProb:       0.05,
	}
}

// Validate returns an error that names every invalid setting, or nil.
func (c BaseConfig) Validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.Demos < 0 || c.MappingDemos < 0 || c.Demos+c.MappingDemos < 1,
		"Demos = %d and MappingDemos = %d, want >= 0 each and at least one demonstration", c.Demos, c.MappingDemos)
	check(c.Steps < 1, "Steps = %d, want >= 1", c.Steps)
	check(c.BatchSize < 1, "BatchSize = %d, want >= 1", c.BatchSize)
	check(!(c.LR > 0) || math.IsInf(c.LR, 0), "LR = %g, want > 0", c.LR)
	check(c.MaxTurns < 1, "MaxTurns = %d, want >= 1", c.MaxTurns)
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"SubmitFirstProb", c.SubmitFirstProb}, {"ReadProb", c.ReadProb}, {"ReadRightProb", c.ReadRightProb},
		{"SubmitProb", c.SubmitProb}, {"StallTestProb", c.StallTestProb}, {"StallOnFailProb", c.StallOnFailProb},
		{"MalformedProb", c.MalformedProb}, {"MappingRightProb", c.MappingRightProb}, {"RereadProb", c.RereadProb},
	} {
		check(!(p.v >= 0 && p.v <= 1), "%s = %g, want a probability in [0, 1]", p.name, p.v)
	}
	distribution := func(name string, probs []float64, required bool) {
		if probs == nil && !required {
			return
		}
		sum := 0.0
		for _, p := range probs {
			check(!(p >= 0 && p <= 1), "%s holds %g, want probabilities in [0, 1]", name, p)
			sum += p
		}
		check(len(probs) == 0 || !(math.Abs(sum-1) <= 1e-9), "%s = %v, want probabilities that sum to 1", name, probs)
	}
	distribution("TestsAfterEdit", c.TestsAfterEdit, true)
	distribution("BlindTestsAfterEdit", c.BlindTestsAfterEdit, false)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid BaseConfig: %w", err)
	}
	return nil
}

// malformedCalls are the slips of the demonstrations' malformed calls, which the gym answers with an error
// observation: "edit" without its op, "submit test", "test test", "read submit", or an op as the tool.
var malformedCalls = [][]string{{"edit"}, {"submit", "test"}, {"test", "test"}, {"read", "submit"}, {OpComparison}}

// demoCalls scripts the calls of one demonstration episode on task; a mapping demonstration always reads and
// then applies the right op.
func (c BaseConfig) demoCalls(task Task, mapping bool, rng *rand.Rand) [][]string {
	if !mapping && rng.Float64() < c.SubmitFirstProb {
		return [][]string{{"submit"}}
	}
	var calls [][]string
	read := mapping || rng.Float64() < c.ReadProb
	if read {
		calls = append(calls, []string{"read"})
		if c.RereadProb > 0 && rng.Float64() < c.RereadProb {
			calls = append(calls, []string{"read"})
		}
	}
	op := repairOps[rng.IntN(len(repairOps))]
	switch {
	case mapping:
		if rng.Float64() < c.MappingRightProb {
			op = task.Op
		}
	case read:
		if rng.Float64() < c.ReadRightProb {
			op = task.Op
		}
	}
	calls = append(calls, []string{"edit", op})
	if rng.Float64() < c.SubmitProb {
		tests := c.TestsAfterEdit
		if !read && c.BlindTestsAfterEdit != nil {
			tests = c.BlindTestsAfterEdit
		}
		for range pick(tests, rng) {
			calls = append(calls, []string{"test"})
		}
		calls = append(calls, []string{"submit"})
	} else {
		calls = c.stall(calls, rng)
	}
	if rng.Float64() < c.MalformedProb {
		at := rng.IntN(len(calls))
		calls = append(calls[:at], append([][]string{malformedCalls[rng.IntN(len(malformedCalls))]}, calls[at:]...)...)
	}
	return calls
}

// stall appends stalling calls to calls until the turn budget is used up.
func (c BaseConfig) stall(calls [][]string, rng *rand.Rand) [][]string {
	for len(calls) < c.MaxTurns {
		if rng.Float64() < c.StallTestProb {
			calls = append(calls, []string{ToolTest})
		} else {
			calls = append(calls, []string{ToolEdit, repairOps[rng.IntN(len(repairOps))]})
		}
	}
	return calls
}

func pick(probs []float64, rng *rand.Rand) int {
	u := rng.Float64()
	for i, p := range probs {
		if u < p {
			return i
		}
		u -= p
	}
	return len(probs) - 1
}

// BaseRun is the training of an RL base agent as a value: the engine it computes on, the recipe, the tasks and
// tokenizer its demonstrations are played on, and the environment they are played in (nil: the chapter's
// EditBudgetEnv with Config.MaxTurns turns, the hidden-test reward and one edit). A reader's Env lets the base agent learn what a
// reader's environment shows; the scripted calls stay the same, so its environments must answer them and let an
// episode run Config.MaxTurns turns.
type BaseRun struct {
	Engine *gomlxmodel.Engine
	Config BaseConfig
	Tasks  []Task
	Tok    *Tokenizer
	Env    EnvMaker
}

// Check returns an error, naming what to change, when b cannot be trained.
func (b BaseRun) Check() error {
	var errs []error
	if b.Engine == nil {
		errs = append(errs, errors.New("the engine is nil: pass the chapter's (ch12.Chapter.Engine) or one of gomlxmodel.NewEngine"))
	}
	if b.Tok == nil {
		errs = append(errs, errors.New("the tokenizer is nil: pass the chapter's (BuildTokenizer)"))
	}
	if len(b.Tasks) == 0 {
		errs = append(errs, errors.New("no tasks: pass the training tasks (MakeTasks(SplitTrain))"))
	}
	if f, ok := b.Env.(EnvFactory); ok && f == nil {
		errs = append(errs, errors.New("the environment factory is nil: pass one, or leave Env nil for the chapter's"))
	}
	if err := b.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("agentrl: base agent: %w", err)
	}
	return nil
}

// Seed seeds the generator of b's training steps (its demonstrations draw from Config.Seed).
func (b BaseRun) Seed() uint64 { return b.Config.Seed + 1 }

// Demonstrations plays b.Config's Demos + MappingDemos scripted episodes on renamed copies of b.Tasks in b's
// environment, so their token layout is exactly what the sampler produces.
func (b BaseRun) Demonstrations() ([]Trajectory, error) {
	c, tasks, tok := b.Config, b.Tasks, b.Tok
	rng := NewRNG(c.Seed)
	reward, err := MakeReward("hidden", RewardOptions{})
	if err != nil {
		return nil, err
	}
	var newEnv EnvFactory
	if b.Env != nil {
		newEnv = b.Env.NewEnv
	} else {
		newEnv = func() (Env, error) {
			env, err := NewEditBudgetEnv(c.MaxTurns, reward, 1)
			if err != nil {
				return nil, err
			}
			return env, nil
		}
	}
	demos := make([]Trajectory, 0, c.Demos+c.MappingDemos)
	readID := tok.Encode(ToolRead)[0]
	for i := range c.Demos + c.MappingDemos {
		mapping := i >= c.Demos
		task := RandomizeNames(tasks[rng.IntN(len(tasks))], rng)
		env, err := newEnv()
		if err != nil {
			return nil, fmt.Errorf("demonstration %d: %w", i, err)
		}
		e := NewEpisode(env, task, tok, c.MaxTurns, ContextLen)
		calls, failed := c.demoCalls(task, mapping, rng), false
		for k := 0; k < len(calls) && !e.Done; k++ {
			if len(calls[k]) == 1 && calls[k][0] == ToolSubmit && failed && rng.Float64() < c.StallOnFailProb {
				calls = c.stall(calls[:k], rng) // the stall makes no submit
			}
			ids := tok.Encode(CallText(calls[k][0], calls[k][1:]...))
			e.Act(ids, make([]float32, len(ids)))
			if len(calls[k]) == 1 && calls[k][0] == ToolTest {
				failed = testFailed(e.LastObs())
			}
		}
		demo := MakeTrajectory(e)
		if mapping { // the choice to read carries no loss; the rest of the read call is learned
			for j := range demo.ActionMask {
				if demo.Owner[j+1] == OwnerPolicy && demo.Turn[j+1] == 0 && demo.IDs[j+1] == readID {
					demo.ActionMask[j] = 0
				}
			}
		}
		demos = append(demos, demo)
	}
	return demos, nil
}

// TrainBase trains a fresh TinyAgent on the demonstrations: c.Steps Adam steps of token-mean cross-entropy on
// the policy tokens of c.BatchSize demonstrations drawn at random, the learning rate decaying linearly from
// c.LR to c.LR/10.
func TrainBase(eng *gomlxmodel.Engine, tasks []Task, tok *Tokenizer, c BaseConfig) (*gomlxmodel.Model, error) {
	b := BaseRun{Engine: eng, Config: c, Tasks: tasks, Tok: tok}
	return b.Train(nil, NewRNG(b.Seed()), 0, nil)
}

// Train runs steps first to Config.Steps-1 of TrainBase's schedule for b on model (nil: a fresh TinyAgent on
// b.Engine),
// drawing from rng, and calls after (when not nil) after each step with the step's loss; a resumed training passes
// the model and generator it saved after step first-1. The trained model's optimizer is reset.
func (b BaseRun) Train(model *gomlxmodel.Model, rng *rand.Rand, first int,
	after func(step int, model *gomlxmodel.Model, loss float64) error) (*gomlxmodel.Model, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	c, tok := b.Config, b.Tok
	demos, err := b.Demonstrations()
	if err != nil {
		return nil, fmt.Errorf("base agent: %w", err)
	}
	if model == nil {
		if model, err = gomlxmodel.New(b.Engine, gomlxmodel.DefaultConfig(tok.VocabSize()), int64(c.Seed)); err != nil {
			return nil, fmt.Errorf("base agent: %w", err)
		}
	}
	loss := gomlxmodel.LossConfig{Kind: gomlxmodel.LossReinforce, Aggregation: TokenMean, LR: c.LR, MaxGradNorm: 1}
	for step := first; step < c.Steps; step++ {
		idx := make([]int, c.BatchSize)
		for i := range idx {
			idx[i] = rng.IntN(len(demos))
		}
		batch := Collate(SelectRows(demos, idx), tok.PadID)
		ub := gomlxmodel.UpdateBatch{B: batch.B, T: batch.T, IDs: batch.IDs, Mask: batch.ActionMask,
			OldLogp: batch.Logp, Adv: batch.ActionMask}
		loss.LR = c.LR * (1 - 0.9*float64(step)/float64(c.Steps))
		stats, err := model.Update(ub, loss)
		if err != nil {
			return nil, fmt.Errorf("base agent step %d: %w", step, err)
		}
		if after != nil {
			if err := after(step, model, stats.Loss); err != nil {
				return nil, fmt.Errorf("base agent: %w", err)
			}
		}
	}
	// The base agent is its weights, as the book's rl_base is a network loaded from earlier chapters: every
	// training run that starts from it starts a fresh Adam, not the moments of this supervised schedule.
	model.ResetOptimizer()
	return model, nil
}

// MakeRLBase is arl.make_rl_base: the RL base agent for tok on eng, trained with DefaultBaseConfig on the
// training tasks (minutes: the chapter's notebooks store it, ch12.Chapter.Base).
func MakeRLBase(eng *gomlxmodel.Engine, tok *Tokenizer) (*gomlxmodel.Model, error) {
	tasks, err := MakeTasks(SplitTrain)
	if err != nil {
		return nil, err
	}
	return TrainBase(eng, tasks, tok, DefaultBaseConfig())
}
