package agentrl

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// maskedTruncationAdvantages is 12.7's advantage of the masked-truncation variant, as its notebook writes it:
// group mean and std over submitted episodes only; unsubmitted episodes get 0.
func maskedTruncationAdvantages(trajs []Trajectory, G int) []float32 {
	adv := make([]float32, len(trajs))
	for start := 0; start < len(trajs); start += G {
		group := trajs[start : start+G]
		n, mean, ss := 0.0, 0.0, 0.0
		for _, t := range group {
			if t.Info.Submitted {
				n, mean = n+1, mean+t.Reward
			}
		}
		mean /= max(n, 1)
		for _, t := range group {
			if t.Info.Submitted {
				ss += (t.Reward - mean) * (t.Reward - mean)
			}
		}
		std := math.Sqrt(ss / max(n-1, 1))
		for i, t := range group {
			if t.Info.Submitted {
				adv[start+i] = float32((t.Reward - mean) / (std + 1e-6))
			}
		}
	}
	return adv
}

// trainCreditLoop is the library's train_credit before the advantage seam, verbatim: GRPO's loop on a copy of base with token-level ("token") or turn-level ("turn")
// GAE advantages from a copy of critic, per-call rewards (cfg's step penalty on every call, the verdict on the
// last), whitened over the batch's policy tokens; the critic takes one regression step (lr 1e-3) per training
// step on the batch's returns-to-go. The run's generator is seeded with cfg.Seed.
func trainCreditLoop(base *gomlxmodel.Model, critic *gomlxmodel.Critic, tasks []Task, tok *Tokenizer, cfg RLConfig,
	scheme string, steps int, lambda float64) (*Run, error) {
	if scheme != "token" && scheme != "turn" {
		return nil, fmt.Errorf("train_credit: scheme %q, want \"token\" or \"turn\"", scheme)
	}
	if !(lambda >= 0 && lambda <= 1) {
		return nil, fmt.Errorf("train_credit: lambda %g, want a number in [0, 1]", lambda)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	if critic, err = critic.Clone(); err != nil {
		return nil, err
	}
	rng := NewRNG(cfg.Seed)
	var history []StepStats
	for step := range steps {
		trajs, _, err := SampleStep(policy, nil, tasks, tok, cfg, rng)
		if err != nil {
			return nil, fmt.Errorf("train_credit step %d: %w", step, err)
		}
		batch := Collate(trajs, tok.PadID)
		mask, rewards := batch.Mask(), PerCallRewards(trajs, batch.Mask(), cfg.Reward.StepPenalty)
		values, err := CriticValues(critic, batch) // [B][T-1]
		if err != nil {
			return nil, err
		}
		var adv [][]float32
		if scheme == "token" {
			adv, _ = GAEAdvantages(rewards, values, mask, 1, lambda)
		} else {
			adv = TurnAdvantages(rewards, values, mask, batch.Turns(), 1, lambda)
		}
		if _, err := RLUpdate(policy, batch, MaskedWhiten(adv, mask), cfg, rng); err != nil {
			return nil, fmt.Errorf("train_credit step %d: %w", step, err)
		}
		if _, err := ValueStep(critic, batch, values, ReturnsToGo(rewards, mask), 0, 1e-3); err != nil {
			return nil, fmt.Errorf("train_credit step %d: %w", step, err)
		}
		history = append(history, StepStats{Step: step, Stats: BehaviorStats(trajs)})
	}
	return &Run{Policy: policy, Critic: critic, History: history}, nil
}

// rampedPenaltyLoop is train_rl's loop written out with the step penalty ramped in (RampedPenalty): each step
// samples, computes the group advantages and updates with that step's configuration, on a copy of base. The run's
// generator is seeded with cfg.Seed. The chapter runs it as a GRPO with WithSchedule(RampedPenalty(cfg, steps)),
// which computes the same policy and history and also logs the episodes.
func rampedPenaltyLoop(base *gomlxmodel.Model, tasks []Task, tok *Tokenizer, cfg RLConfig, steps int) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfgAt, rng, policy := RampedPenalty(cfg, steps), NewRNG(cfg.Seed), must(base.Clone())
	var history []StepStats
	for step := range steps {
		c := cfgAt(step)
		trajs, _, err := SampleStep(policy, nil, tasks, tok, c, rng)
		if err != nil {
			return nil, fmt.Errorf("train_ramped_penalty step %d: %w", step, err)
		}
		batch := Collate(trajs, tok.PadID)
		adv := BroadcastAdvantages(ComputeAdvantages(batch.Rewards, c.GroupSize), batch.Mask())
		if _, err := RLUpdate(policy, batch, adv, c, rng); err != nil {
			return nil, fmt.Errorf("train_ramped_penalty step %d: %w", step, err)
		}
		history = append(history, StepStats{Step: step, Stats: BehaviorStats(trajs)})
	}
	return &Run{Policy: policy, History: history}, nil
}

// maskedTruncationLoop is the loop 12.7's notebook wrote before the advantage seam, verbatim but for errors.
func maskedTruncationLoop(base *Model, tasks []Task, tok *Tokenizer, cfg RLConfig, steps int) (*Run, error) {
	rng, policy := NewRNG(cfg.Seed), must(base.Clone())
	var history []StepStats
	for step := range steps {
		trajs, _, err := SampleStep(policy, nil, tasks, tok, cfg, rng)
		if err != nil {
			return nil, err
		}
		batch := Collate(trajs, tok.PadID)
		adv := maskedTruncationAdvantages(trajs, cfg.GroupSize)
		if _, err := RLUpdate(policy, batch, BroadcastAdvantages(adv, batch.Mask()), cfg, rng); err != nil {
			return nil, err
		}
		history = append(history, StepStats{Step: step, Stats: BehaviorStats(trajs)})
	}
	return &Run{Policy: policy, History: history}, nil
}

type Model = gomlxmodel.Model

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// runBytes is r as WriteRun writes it.
func runBytes(t *testing.T, r *Run) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteRun(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// trainedRun is the chapter's GRPO run of a copy of base, as the runs package stores it but without a store:
// RunLoop of GRPO with its episodes logged, env making the environments (nil: MakeEnv(cfg)) and opts its seams.
func trainedRun(base *Model, tok *Tokenizer, tasks []Task, cfg RLConfig, steps int, env EnvMaker, opts ...RunOption) (*Run, error) {
	g, err := GRPO{Tasks: tasks, Tok: tok, Cfg: cfg, Steps: steps, Env: env, LogEpisodes: true}.With(opts...)
	if err != nil {
		return nil, err
	}
	return RunLoop(g, base)
}

// errStop stops a run after a step in resumedRun.
var errStop = errors.New("stopped after a step")

// resumedRun runs l from base as a resumed run does: Start, then Train stopped after step stop, the run's state
// (WriteRun) and generator state (NewSource's MarshalBinary) saved there, then read back into a new run and a new
// generator that Train goes on with from step stop+1. A Loop keeps everything it reads between steps in the run,
// so this is RunLoop's run.
func resumedRun(t *testing.T, l Loop, base *Model, stop int) *Run {
	t.Helper()
	run, err := l.Start(base)
	if err != nil {
		t.Fatal(err)
	}
	run.Base = base
	_, seed := l.Plan()
	src := NewSource(seed)
	err = Train(l, run, rand.New(src), 0, func(step int) error {
		if step == stop {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("the run did not stop after step %d: %v", stop, err)
	}
	state, err := src.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	saved := runBytes(t, run)
	run, err = ReadRun(testEngine(), bytes.NewReader(saved))
	if err != nil {
		t.Fatal(err)
	}
	run.Base = base
	src = NewSource(0)
	if err := src.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	if err := Train(l, run, rand.New(src), stop+1, nil); err != nil {
		t.Fatal(err)
	}
	return run
}

// TestSeamsReproduceChapterLoops checks that every chapter loop re-expressed through GRPO's seams computes the run
// its own loop computes, byte for byte (WriteRun), but for the episode log that the chapter's runs add; and that
// the seamed run, stopped after its first step and resumed from its saved state, computes it too.
func TestSeamsReproduceChapterLoops(t *testing.T) {
	tok, train, base, critic, cfg := creditWorkload(t)
	never := cfg
	never.Reward.WrongSubmit = -1
	const steps = 2
	credit := func(scheme string) RunOption {
		return WithAdvantages(CreditAdvantages{Scheme: scheme, Lambda: 0.95})
	}
	for _, tc := range []struct {
		name string
		old  func() (*Run, error)
		cfg  RLConfig
		opts []RunOption
	}{
		{"12.7 masked truncation", func() (*Run, error) { return maskedTruncationLoop(base, train, tok, never, steps) }, never,
			[]RunOption{WithAdvantages(AdvantageFunc(func(s StepBatch) ([][]float32, error) {
				return BroadcastAdvantages(maskedTruncationAdvantages(s.Trajs, s.Cfg.GroupSize), s.Batch.Mask()), nil
			}))}},
		{"12.7 ramped penalty", func() (*Run, error) { return rampedPenaltyLoop(base, train, tok, cfg, steps) }, cfg,
			[]RunOption{WithSchedule(RampedPenalty(cfg, steps))}},
		{"12.2 token GAE", func() (*Run, error) { return trainCreditLoop(base, critic, train, tok, cfg, "token", steps, 0.95) }, cfg,
			[]RunOption{WithCritic(critic), credit("token")}},
		{"12.2 turn GAE", func() (*Run, error) { return trainCreditLoop(base, critic, train, tok, cfg, "turn", steps, 0.95) }, cfg,
			[]RunOption{WithCritic(critic), credit("turn")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, err := tc.old()
			if err != nil {
				t.Fatal(err)
			}
			g, err := GRPO{Tasks: train, Tok: tok, Cfg: tc.cfg, Steps: steps, LogEpisodes: true}.With(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			run, err := RunLoop(g, base)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Log) == 0 {
				t.Error("the seamed run logged no episodes")
			}
			resumed := resumedRun(t, g, base, 0)
			if !bytes.Equal(runBytes(t, resumed), runBytes(t, run)) {
				t.Error("the seamed run, resumed after its first step, differs from the uninterrupted one")
			}
			run.Log, run.LogTask = nil, nil
			if !bytes.Equal(runBytes(t, old), runBytes(t, run)) {
				t.Errorf("the seamed run differs from the chapter's loop:\nhistory %v\n     vs %v", run.History, old.History)
			}
		})
	}
}

// TestRunOptionsReject checks that invalid seams are refused with a message that says what to change, before
// anything is trained: by With for an option, by Check (and so Start and RunLoop) for a GRPO value.
func TestRunOptionsReject(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize = 2, 2
	bad, nanLR := cfg, cfg
	bad.GroupSize = 1 // valid for sampling, but GRPO trains nothing on groups of one (Check)
	nanLR.LR = math.NaN()
	adv := AdvantageFunc(GroupAdvantages)
	zero := MetricFunc(func(StepBatch) float64 { return 0 })
	g := GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 2}
	for _, tc := range []struct {
		name string
		g    GRPO
		opts []RunOption
		want string
	}{
		{"nil option", g, []RunOption{nil}, "option 0 is nil"},
		{"nil advantages", g, []RunOption{WithAdvantages(nil)}, "pass an Advantages"},
		{"nil advantage function", g, []RunOption{WithAdvantages(AdvantageFunc(nil))}, "the AdvantageFunc is nil"},
		{"two advantages", g, []RunOption{WithAdvantages(adv), WithAdvantages(adv)}, "given twice"},
		{"unnamed metric", g, []RunOption{WithMetric(" ", zero)}, "name is empty"},
		{"nil metric", g, []RunOption{WithMetric("a", nil)}, `WithMetric("a", nil)`},
		{"two metrics of one name", g, []RunOption{WithMetric("a", zero), WithMetric("a", zero)}, "two metrics named"},
		{"invalid scheduled step", g, []RunOption{WithSchedule(func(k int) RLConfig {
			if k == 1 {
				return nanLR
			}
			return cfg
		})}, "step 1"},
		{"schedule before the steps", GRPO{Tasks: train, Tok: tok, Cfg: cfg},
			[]RunOption{WithSchedule(RampedPenalty(cfg, 2))}, "set its steps first"},
		{"two schedules", g, []RunOption{WithSchedule(RampedPenalty(cfg, 2)), WithSchedule(RampedPenalty(cfg, 2))}, "given twice"},
		{"nil critic", g, []RunOption{WithCritic(nil)}, "WithCritic(nil)"},
	} {
		if _, err := tc.g.With(tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one that says %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		g    GRPO
		want string
	}{
		{"no tokenizer", GRPO{Tasks: train, Cfg: cfg, Steps: 1}, "the tokenizer is nil"},
		{"NaN learning rate", GRPO{Tasks: train, Tok: tok, Cfg: nanLR, Steps: 1}, "LR = NaN"},
		{"negative steps", GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: -3}, "steps = -3, want >= 1"},
		{"groups of one", GRPO{Tasks: train, Tok: tok, Cfg: bad, Steps: 1}, "GroupSize = 1, want >= 2"},
		{"no tasks", GRPO{Tok: tok, Cfg: cfg, Steps: 1}, "no tasks"},
		{"fewer tasks than prompts per step", GRPO{Tasks: train[:1], Tok: tok, Cfg: cfg, Steps: 1}, "at least PromptsPerStep"},
		{"a schedule of the wrong length", GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 2, Schedule: []RLConfig{cfg}},
			"1 configurations for 2 steps"},
		{"an invalid scheduled step", GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 2, Schedule: []RLConfig{cfg, bad}},
			"schedule step 1"},
		{"an unnamed metric", GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 1, Metrics: []Metric{{Of: zero}}}, "without a name"},
		{"a metric without a function", GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 1, Metrics: []Metric{{Name: "a"}}},
			"has no function"},
		{"two metrics of one name", GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 1, Metrics: []Metric{{"a", zero}, {"a", zero}}},
			"two metrics named"},
	} {
		if err := tc.g.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check: %v, want an error that says %q", tc.name, err, tc.want)
		}
		if _, err := RunLoop(tc.g, base); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: RunLoop: %v, want an error that says %q", tc.name, err, tc.want)
		}
	}
	if err := g.Check(); err != nil {
		t.Errorf("a valid run: %v", err)
	}
	for _, c := range []CreditAdvantages{{"episode", 0.95}, {"token", 1.5}, {"turn", math.NaN()}} {
		if err := c.Check(); err == nil {
			t.Errorf("CreditAdvantages%+v: Check accepted it", c)
		}
	}
	if err := (CreditAdvantages{"turn", 0.95}).Check(); err != nil {
		t.Errorf("CreditAdvantages turn 0.95: %v", err)
	}
}

// TestMetricsAndFreshOptimizer checks that WithMetric stores one value per step and that FreshOptimizer starts a
// trained policy's run from zero Adam steps.
func TestMetricsAndFreshOptimizer(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 3
	first, err := trainedRun(base, tok, train, cfg, 2, nil,
		WithMetric("episodes", MetricFunc(func(s StepBatch) float64 { return float64(len(s.Trajs)) })))
	if err != nil {
		t.Fatal(err)
	}
	if got := first.Metrics["episodes"]; len(got) != 2 || got[0] != 4 || got[1] != 4 {
		t.Errorf("metric %v, want [4 4]", got)
	}
	kept := must(trainedRun(first.Policy, tok, train, cfg, 1, nil))
	fresh := must(trainedRun(first.Policy, tok, train, cfg, 1, nil, FreshOptimizer()))
	if kept.Policy.Steps() != first.Policy.Steps()+1 || fresh.Policy.Steps() != 1 {
		t.Errorf("Adam steps: kept %d (want %d), fresh %d (want 1)", kept.Policy.Steps(), first.Policy.Steps()+1,
			fresh.Policy.Steps())
	}
}

// maskedLoop is a reader's loop of its own (12.7's masked truncation) as a Loop value: its fields are what it
// reads besides the base model.
type maskedLoop struct {
	Tasks []Task
	Tok   *Tokenizer
	Cfg   RLConfig
	Steps int
}

func (l maskedLoop) Plan() (int, uint64) { return l.Steps, l.Cfg.Seed }

func (l maskedLoop) Start(base *Model) (*Run, error) {
	p, err := base.Clone()
	return &Run{Policy: p}, err
}

func (l maskedLoop) Step(run *Run, step int, rng *rand.Rand) error {
	trajs, _, err := SampleStep(run.Policy, nil, l.Tasks, l.Tok, l.Cfg, rng)
	if err != nil {
		return err
	}
	batch := Collate(trajs, l.Tok.PadID)
	adv := maskedTruncationAdvantages(trajs, l.Cfg.GroupSize)
	if _, err := RLUpdate(run.Policy, batch, BroadcastAdvantages(adv, batch.Mask()), l.Cfg, rng); err != nil {
		return err
	}
	run.History = append(run.History, StepStats{Step: step, Stats: BehaviorStats(trajs)})
	return nil
}

// TestRunLoopOfOwnLoop checks that a caller's loop run through RunLoop gives its direct run, that resumed from
// its state after a step it gives that run too, that Train stops at a step's error, naming the step, and that
// RunLoop leaves the base untouched and records it as the run's Base.
func TestRunLoopOfOwnLoop(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	baseFP := fingerprintOf(t, base)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 3
	const steps = 3
	loop := maskedLoop{Tasks: train, Tok: tok, Cfg: cfg, Steps: steps}
	want := runBytes(t, must(maskedTruncationLoop(base, train, tok, cfg, steps)))
	run := must(RunLoop(loop, base))
	if got := runBytes(t, run); !bytes.Equal(got, want) {
		t.Fatal("RunLoop differs from the direct loop")
	}
	if run.Base != base {
		t.Error("RunLoop did not record the base as the run's Base")
	}
	for stop := range steps - 1 {
		if got := runBytes(t, resumedRun(t, loop, base, stop)); !bytes.Equal(got, want) {
			t.Errorf("the loop resumed after step %d differs from an uninterrupted one", stop)
		}
	}
	failing := loop
	failing.Tasks = train[:1] // StepTasks refuses fewer tasks than PromptsPerStep at the first step
	r := must(failing.Start(base))
	err := Train(failing, r, NewRNG(cfg.Seed), 0, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "step 0: ") {
		t.Errorf("a failing step: %v, want an error naming step 0", err)
	}
	if fingerprintOf(t, base) != baseFP {
		t.Error("RunLoop changed its base")
	}
}

// TestFinalValues checks that FinalValues gives, for an episode shorter than the batch, the value CriticValues
// gives at its last token, and a value for the longest one too.
func TestFinalValues(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	critic := must(gomlxmodel.NewCritic(base, 1))
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 3
	trajs, _, err := SampleStep(base, nil, train, tok, cfg, NewRNG(0))
	if err != nil {
		t.Fatal(err)
	}
	final, err := FinalValues(critic, trajs, tok.PadID)
	if err != nil {
		t.Fatal(err)
	}
	batch := Collate(trajs, tok.PadID)
	values := must(CriticValues(critic, batch))
	for i, tr := range trajs {
		if len(tr.IDs) < batch.T {
			if d := math.Abs(float64(final[i] - values[i][len(tr.IDs)-1])); d > 1e-4 {
				t.Errorf("episode %d: final value %g, CriticValues at its last token %g", i, final[i], values[i][len(tr.IDs)-1])
			}
		}
		if math.IsNaN(float64(final[i])) {
			t.Errorf("episode %d: NaN", i)
		}
	}
	if _, err := FinalValues(nil, trajs, tok.PadID); err == nil {
		t.Error("a nil critic gave no error")
	}
}
