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
	rng, prog := NewRNG(cfg.Seed), NewProgress("train_credit "+scheme, steps)
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
		stats := BehaviorStats(trajs)
		history = append(history, StepStats{Step: step, Stats: stats})
		prog.Done(step, fmt.Sprintf("pass %.2f", stats.PassRate))
	}
	return &Run{Policy: policy, Critic: critic, History: history}, nil
}

// rampedPenaltyLoop is the library's train_ramped_penalty before the schedule seam, verbatim: train_rl on a copy of base with the step penalty ramped in (RampedPenalty). The run's
// generator is seeded with cfg.Seed. The chapter stores this run as TrainedRun(…, WithSchedule(RampedPenalty(cfg,
// steps))), which computes the same policy and history and also logs the episodes.
func rampedPenaltyLoop(base *gomlxmodel.Model, tasks []Task, tok *Tokenizer, cfg RLConfig, steps int) (*Run, error) {
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

func runBytes(t *testing.T, r *Run) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := RunCodec().Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSeamsReproduceChapterLoops checks that every chapter loop re-expressed through TrainedRun's seams stores
// the run its own loop computes, byte for byte (RunCodec), but for the episode log that TrainedRun adds.
func TestSeamsReproduceChapterLoops(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	critic := must(gomlxmodel.NewCritic(base, 1))
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns, cfg.Reward.StepPenalty = 2, 4, 3, 0.05
	never := cfg
	never.Reward.WrongSubmit = -1
	const steps = 2
	credit := func(scheme string) RunOption {
		return WithAdvantages(must(CreditAdvantages(scheme, 0.95)), scheme, 0.95)
	}
	for _, tc := range []struct {
		name string
		old  func() (*Run, error)
		cfg  RLConfig
		opts []RunOption
	}{
		{"12.7 masked truncation", func() (*Run, error) { return maskedTruncationLoop(base, train, tok, never, steps) }, never,
			[]RunOption{WithAdvantages(func(s StepBatch) ([][]float32, error) {
				return BroadcastAdvantages(maskedTruncationAdvantages(s.Trajs, s.Cfg.GroupSize), s.Batch.Mask()), nil
			})}},
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
			run, err := TrainedRun(mustStore(t), base, tok, train, tc.cfg, steps, "", nil, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if len(run.Log) == 0 {
				t.Error("the seamed run logged no episodes")
			}
			run.Log, run.LogTask = nil, nil
			if !bytes.Equal(runBytes(t, old), runBytes(t, run)) {
				t.Errorf("the seamed run differs from the chapter's loop:\nhistory %v\n     vs %v", run.History, old.History)
			}
		})
	}
}

// TestRunOptionsKeyAndReject checks that options that change the run change its key, and that invalid ones are
// refused with a message that says what to change, before anything is keyed.
func TestRunOptionsKeyAndReject(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize = 2, 2
	keyOf := func(opts ...RunOption) string {
		o, err := applyRunOptions("test", 2, opts)
		if err != nil {
			t.Fatal(err)
		}
		return must(runKey(base, tok, train, cfg, 2, "", nil, o.keyParts...))
	}
	plain := must(runKey(base, tok, train, cfg, 2, "", nil))
	if keyOf() != plain {
		t.Error("no options changed the key")
	}
	adv := func(s StepBatch) ([][]float32, error) { return GroupAdvantages(s) }
	keys := map[string]string{"none": plain}
	for name, opts := range map[string][]RunOption{
		"advantages":        {WithAdvantages(adv)},
		"advantages λ 0.9":  {WithAdvantages(adv, 0.9)},
		"metric":            {WithMetric("pass", func(s StepBatch) float64 { return 0 })},
		"schedule":          {WithSchedule(RampedPenalty(cfg, 2))},
		"fresh optimizer":   {FreshOptimizer()},
		"critic":            {WithCritic(must(gomlxmodel.NewCritic(base, 1)))},
		"critic, other one": {WithCritic(must(gomlxmodel.NewCritic(base, 2)))},
	} {
		k := keyOf(opts...)
		for other, ok := range keys {
			if ok == k {
				t.Errorf("%s and %s share a key", name, other)
			}
		}
		keys[name] = k
	}
	bad := cfg
	bad.GroupSize = 1
	for _, tc := range []struct {
		name string
		opts []RunOption
		want string
	}{
		{"nil option", []RunOption{nil}, "option 0 is nil"},
		{"nil advantages", []RunOption{WithAdvantages(nil)}, "pass an AdvantageFunc"},
		{"two advantages", []RunOption{WithAdvantages(adv), WithAdvantages(adv)}, "given twice"},
		{"unkeyable parameter", []RunOption{WithAdvantages(adv, func() {})}, "cannot be keyed"},
		{"unnamed metric", []RunOption{WithMetric(" ", func(StepBatch) float64 { return 0 })}, "name is empty"},
		{"two metrics of one name", []RunOption{WithMetric("a", func(StepBatch) float64 { return 0 }),
			WithMetric("a", func(StepBatch) float64 { return 1 })}, "two metrics named"},
		{"invalid scheduled step", []RunOption{WithSchedule(func(k int) RLConfig {
			if k == 1 {
				return bad
			}
			return cfg
		})}, "step 1"},
		{"nil critic", []RunOption{WithCritic(nil)}, "WithCritic(nil)"},
	} {
		_, err := TrainedRun(mustStore(t), base, tok, train, cfg, 2, "", nil, tc.opts...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one that says %q", tc.name, err, tc.want)
		}
	}
	if _, err := CreditAdvantages("episode", 0.95); err == nil {
		t.Error("CreditAdvantages accepted an unknown scheme")
	}
}

// TestMetricsAndFreshOptimizer checks that WithMetric stores one value per step and that FreshOptimizer starts a
// trained policy's run from zero Adam steps.
func TestMetricsAndFreshOptimizer(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 3
	store := mustStore(t)
	first, err := TrainedRun(store, base, tok, train, cfg, 2, "", nil,
		WithMetric("episodes", func(s StepBatch) float64 { return float64(len(s.Trajs)) }))
	if err != nil {
		t.Fatal(err)
	}
	if got := first.Metrics["episodes"]; len(got) != 2 || got[0] != 4 || got[1] != 4 {
		t.Errorf("metric %v, want [4 4]", got)
	}
	kept := must(TrainedRun(store, first.Policy, tok, train, cfg, 1, "", nil))
	fresh := must(TrainedRun(store, first.Policy, tok, train, cfg, 1, "", nil, FreshOptimizer()))
	if kept.Policy.Steps() != first.Policy.Steps()+1 || fresh.Policy.Steps() != 1 {
		t.Errorf("Adam steps: kept %d (want %d), fresh %d (want 1)", kept.Policy.Steps(), first.Policy.Steps()+1,
			fresh.Policy.Steps())
	}
}

// TestResumableRun checks that a caller's loop run through ResumableRun gives its direct run, is stored, and,
// stopped by an error after a saved step, resumes to the same bytes.
func TestResumableRun(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 3
	const steps = 3
	fail := -1 // the step that fails once
	loop := Loop{Name: "masked", Steps: steps, Seed: cfg.Seed,
		Start: func() (*Run, error) {
			p, err := base.Clone()
			return &Run{Policy: p}, err
		},
		Step: func(run *Run, step int, rng *rand.Rand) error {
			if step == fail {
				fail = -1
				return errors.New("stopped")
			}
			trajs, _, err := SampleStep(run.Policy, nil, train, tok, cfg, rng)
			if err != nil {
				return err
			}
			batch := Collate(trajs, tok.PadID)
			adv := maskedTruncationAdvantages(trajs, cfg.GroupSize)
			if _, err := RLUpdate(run.Policy, batch, BroadcastAdvantages(adv, batch.Mask()), cfg, rng); err != nil {
				return err
			}
			run.History = append(run.History, StepStats{Step: step, Stats: BehaviorStats(trajs)})
			return nil
		}}
	want := runBytes(t, must(maskedTruncationLoop(base, train, tok, cfg, steps)))
	if got := runBytes(t, must(ResumableRun(mustStore(t), Key("test"), loop))); !bytes.Equal(got, want) {
		t.Fatal("ResumableRun differs from the direct loop")
	}
	store := mustStore(t)
	store.CheckpointEvery = everyStep
	fail = 2
	if _, err := ResumableRun(store, Key("test"), loop); err == nil {
		t.Fatal("the failing step returned no error")
	}
	log := captureNotices(store)
	if got := runBytes(t, must(ResumableRun(store, Key("test"), loop))); !bytes.Equal(got, want) {
		t.Fatal("the resumed loop differs from an uninterrupted one")
	}
	if !strings.Contains(log.String(), "resuming") {
		t.Errorf("the second call did not resume:\n%s", log)
	}
	for _, tc := range []struct {
		name string
		loop Loop
		want string
	}{
		{"no steps", Loop{Start: loop.Start, Step: loop.Step}, "Loop.Steps = 0"},
		{"no start", Loop{Steps: 1, Step: loop.Step}, "Loop.Start is nil"},
		{"no step", Loop{Steps: 1, Start: loop.Start}, "Loop.Step is nil"},
	} {
		if _, err := ResumableRun(store, Key("x"), tc.loop); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one that says %q", tc.name, err, tc.want)
		}
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
