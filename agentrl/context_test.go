package agentrl

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// The chapter's context sampler, training and evaluation as they were written with an integer keepObs, before the
// context policy became a function (ContextPolicy), verbatim but for their names: the references that the tests
// below hold the new code to.

// oldContextRolloutBatch is context_rollout_batch: lockstep episodes whose every call is generated from
// ContextView(keepObs) of the episode so far (keepObs < 0: the full context). It returns the episodes and the
// per-call samples (view, call) in completion order. A row's KV cache is kept while its view only grows and is
// rebuilt from the view when masking removed tokens from it.
func oldContextRolloutBatch(model *gomlxmodel.Model, envs []Env, tasks []Task, tok *Tokenizer, keepObs, maxTurns int,
	temperature float64, rng *rand.Rand) ([]Trajectory, []IndexedSample, error) {
	if len(envs) != len(tasks) {
		return nil, nil, fmt.Errorf("context rollout: %d envs for %d tasks", len(envs), len(tasks))
	}
	if V := model.Config().Vocab; V != tok.VocabSize() {
		return nil, nil, fmt.Errorf("context rollout: model vocabulary %d != tokenizer vocabulary %d", V, tok.VocabSize())
	}
	episodes := make([]*Episode, len(envs))
	for b := range envs {
		episodes[b] = NewEpisode(envs[b], tasks[b], tok, maxTurns, model.Config().MaxLen)
	}
	dec, err := model.NewDecoder(len(episodes))
	if err != nil {
		return nil, nil, err
	}
	defer dec.Close()
	type call struct {
		view, ids []int32
		logp      []float32
	}
	type finished struct {
		b int
		call
	}
	calls, cached := make([]call, len(episodes)), make([][]int32, len(episodes))
	var samples []finished
	V := model.Config().Vocab
	for anyActive(episodes) {
		for b, e := range episodes {
			if e.Done || len(calls[b].view) > 0 {
				continue
			}
			view := ContextView(e.IDs, e.Owner, e.Turn, len(e.Actions), keepObs) // a new call starts: fix its view
			if !hasPrefix(view, cached[b]) {
				dec.ResetRow(b)
				cached[b] = nil
			}
			dec.Feed(b, view[len(cached[b]):])
			cached[b], calls[b] = append(cached[b], view[len(cached[b]):]...), call{view: view}
		}
		logits, err := dec.Step()
		if err != nil {
			return nil, nil, err
		}
		for b, e := range episodes {
			if e.Done {
				continue
			}
			id, lp := SampleNext(logits[b*V:(b+1)*V], temperature, rng)
			c := &calls[b]
			c.ids, c.logp = append(c.ids, id), append(c.logp, lp)
			if id == tok.CallEndID || len(c.ids) == MaxCallTokens {
				samples = append(samples, finished{b, *c})
				e.Act(c.ids, c.logp)
				cached[b] = append(cached[b], c.ids[:len(c.ids)-1]...)
				calls[b] = call{}
				continue
			}
			dec.Feed(b, []int32{id})
		}
	}
	trajs := make([]Trajectory, len(episodes))
	for b, e := range episodes {
		trajs[b] = MakeTrajectory(e)
	}
	out := make([]IndexedSample, len(samples))
	for i, s := range samples {
		out[i] = IndexedSample{Episode: s.b, Sample: CallSample(trajs[s.b], s.view, s.ids, s.logp)}
	}
	return trajs, out, nil
}

// oldEvaluateContext is evaluate_context: behavior statistics of nSamples episodes per task, sampled with
// ContextView(keepObs) by a generator seeded with seed, on tasks renamed by a generator of their own (seeded from
// the first's first draw, as Evaluate does: with the full context the two give the same episodes).
func oldEvaluateContext(model *gomlxmodel.Model, tasks []Task, tok *Tokenizer, keepObs, nSamples int, seed uint64,
	cfg RLConfig) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	rng := NewRNG(seed)
	names := NewRNG(rng.Uint64())
	var batchTasks []Task
	var envs []Env
	for _, t := range tasks {
		for range nSamples {
			env, err := MakeEnv(cfg)
			if err != nil {
				return Stats{}, err
			}
			batchTasks, envs = append(batchTasks, RandomizeNames(t, names)), append(envs, env)
		}
	}
	trajs, _, err := oldContextRolloutBatch(model, envs, batchTasks, tok, keepObs, cfg.MaxTurns, cfg.Temperature, rng)
	if err != nil {
		return Stats{}, err
	}
	return BehaviorStats(trajs), nil
}

// oldTrainContext is train_context: steps GRPO steps on a copy of base, sampling with ContextRolloutBatch so that
// every call sees the last keepObs observations, and training on the per-call samples. Each call carries the
// group advantage of its episode. The run's generator is seeded with cfg.Seed.
func oldTrainContext(base *gomlxmodel.Model, tasks []Task, tok *Tokenizer, keepObs int, cfg RLConfig, steps int) (*gomlxmodel.Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	rng := NewRNG(cfg.Seed)
	for step := range steps {
		batchTasks, err := StepTasks(tasks, cfg, rng)
		if err != nil {
			return nil, fmt.Errorf("train_context: %w", err)
		}
		envs, err := MakeEnvs(EnvFactoryOf(cfg), len(batchTasks))
		if err != nil {
			return nil, err
		}
		trajs, samples, err := oldContextRolloutBatch(policy, envs, batchTasks, tok, keepObs, cfg.MaxTurns, cfg.Temperature, rng)
		if err != nil {
			return nil, fmt.Errorf("train_context step %d: %w", step, err)
		}
		rewards := make([]float32, len(trajs))
		for b, t := range trajs {
			rewards[b] = float32(t.Reward)
		}
		episodeAdv := ComputeAdvantages(rewards, cfg.GroupSize) // [E]
		calls, adv := make([]Trajectory, len(samples)), make([]float32, len(samples))
		for i, s := range samples {
			calls[i], adv[i] = s.Sample, episodeAdv[s.Episode]
		}
		batch := Collate(calls, tok.PadID)
		if _, err := RLUpdate(policy, batch, BroadcastAdvantages(adv, batch.Mask()), cfg, rng); err != nil {
			return nil, fmt.Errorf("train_context step %d: %w", step, err)
		}
	}
	return policy, nil
}

// modelBytes is m's weights and optimizer state as WriteTo writes them.
func modelBytes(t *testing.T, m *gomlxmodel.Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestKeepObsReproducesIntegerContext checks that the sampler and the evaluation given KeepObs(n) draw exactly
// what they drew given the integer n: the same tokens, log-probs, per-call samples and statistics.
func TestKeepObsReproducesIntegerContext(t *testing.T) {
	tok, train := testSetup(t)
	policy := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.MaxTurns = 4
	tasks := []Task{train[0], train[0], train[1], train[2]}
	for _, keepObs := range []int{-1, 0, 1, 2} {
		t.Run(fmt.Sprint("keepObs=", keepObs), func(t *testing.T) {
			envs := func() []Env { return must(MakeEnvs(EnvFactoryOf(cfg), len(tasks))) }
			oldTrajs, oldSamples, err := oldContextRolloutBatch(policy, envs(), tasks, tok, keepObs, cfg.MaxTurns, 1, NewRNG(5))
			if err != nil {
				t.Fatal(err)
			}
			trajs, samples, err := ContextRolloutBatch(policy, envs(), tasks, tok, KeepObs(keepObs), cfg.MaxTurns, 1, NewRNG(5))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(trajs, oldTrajs) || !reflect.DeepEqual(samples, oldSamples) {
				t.Error("ContextRolloutBatch with KeepObs differs from the integer keepObs")
			}
			want, err := oldEvaluateContext(policy, train[:3], tok, keepObs, 2, 7, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := must(EvaluateContext(policy, train[:3], tok, KeepObs(keepObs), 2, 7, cfg)); got != want {
				t.Errorf("EvaluateContext: %+v, with the integer keepObs %+v", got, want)
			}
		})
	}
}

// TestTrainContextPolicyIsBitIdentical checks that TrainContext (the loop) given KeepObs = n trains the policy,
// weights and optimizer state, that train_context trained given the integer n; and that the run, stopped after a
// step and resumed from its saved state (as 12.4's stored run is), still does.
func TestTrainContextPolicyIsBitIdentical(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 3
	const steps = 2
	for _, keepObs := range []int{1, -1} {
		t.Run(fmt.Sprint("keepObs=", keepObs), func(t *testing.T) {
			want := modelBytes(t, must(oldTrainContext(base, train, tok, keepObs, cfg, steps)))
			loop := TrainContext{Tasks: train, Tok: tok, Cfg: cfg, Steps: steps, Context: KeepObs(keepObs)}
			run := must(RunLoop(loop, base))
			if got := modelBytes(t, run.Policy); !bytes.Equal(got, want) {
				t.Error("TrainContext with KeepObs differs from the integer keepObs")
			}
			if len(run.History) != steps {
				t.Errorf("%d history entries in a %d-step run", len(run.History), steps)
			}
			if got := modelBytes(t, resumedRun(t, loop, base, 0).Policy); !bytes.Equal(got, want) {
				t.Error("the resumed TrainContext run differs from the uninterrupted one")
			}
		})
	}
}

// TestContextPolicyRejected checks the errors of a context policy that cannot be sampled with: nil, or one that
// gives an empty view.
func TestContextPolicyRejected(t *testing.T) {
	tok, train := testSetup(t)
	policy := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	for _, tc := range []struct {
		name   string
		viewOf ContextPolicy
		want   string
	}{
		{"nil", nil, "KeepObs(-1)"},
		{"empty view", emptyView{}, "empty view"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EvaluateContext(policy, train[:1], tok, tc.viewOf, 1, 7, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("EvaluateContext: %v, want an error saying %q", err, tc.want)
			}
			p := must(policy.Clone())
			_, err = ContextStep(p, train, tok, tc.viewOf, cfg, NewRNG(cfg.Seed))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ContextStep: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// emptyView is a context policy that shows nothing.
type emptyView struct{}

func (emptyView) View([]int32, []Owner, []int32, int) []int32 { return nil }
