package agentrl

import (
	"fmt"
	"math/rand/v2"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// RolloutBatch is arl.rollout_batch (Chapter 5's lockstep sampler): one episode per (env, task) pair, all advanced
// together. Each step samples one token per unfinished episode from the model's KV cache; when a call ends
// (</call> or MaxCallTokens tokens) it goes to the episode, whose observation is prefilled into the cache.
// Draws from rng in row order, once per sampled token, so a seed fixes every episode.
func RolloutBatch(model *gomlxmodel.Model, envs []Env, tasks []Task, tok *Tokenizer, maxTurns int, temperature float64,
	rng *rand.Rand) ([]Trajectory, error) {
	if len(envs) != len(tasks) {
		return nil, fmt.Errorf("rollout: %d envs for %d tasks", len(envs), len(tasks))
	}
	if V := model.Config().Vocab; V != tok.VocabSize() {
		return nil, fmt.Errorf("rollout: model vocabulary %d != tokenizer vocabulary %d", V, tok.VocabSize())
	}
	episodes := make([]*Episode, len(envs))
	for b := range envs {
		episodes[b] = NewEpisode(envs[b], tasks[b], tok, maxTurns, model.Config().MaxLen)
	}
	dec, err := model.NewDecoder(len(episodes))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	fed := make([]int, len(episodes)) // tokens of each row already queued into the cache
	feedEpisode := func(b int) {
		dec.Feed(b, episodes[b].IDs[fed[b]:])
		fed[b] = len(episodes[b].IDs)
	}
	for b, e := range episodes {
		if !e.Done {
			feedEpisode(b)
		}
	}
	calls, callLogp := make([][]int32, len(episodes)), make([][]float32, len(episodes))
	V := model.Config().Vocab
	for anyActive(episodes) {
		logits, err := dec.Step()
		if err != nil {
			return nil, err
		}
		for b, e := range episodes {
			if e.Done {
				continue
			}
			id, lp := SampleNext(logits[b*V:(b+1)*V], temperature, rng)
			calls[b], callLogp[b] = append(calls[b], id), append(callLogp[b], lp)
			if id == tok.CallEndID || len(calls[b]) == MaxCallTokens {
				e.Act(calls[b], callLogp[b])
				calls[b], callLogp[b] = nil, nil
				if !e.Done {
					feedEpisode(b)
				}
				continue
			}
			dec.Feed(b, []int32{id})
			fed[b]++
		}
	}
	if err := episodesErr(episodes); err != nil {
		return nil, err
	}
	trajs := make([]Trajectory, len(episodes))
	for b, e := range episodes {
		trajs[b] = MakeTrajectory(e)
	}
	return trajs, nil
}

// episodesErr is the first episode's error (Episode.Err), naming the episode's task.
func episodesErr(episodes []*Episode) error {
	for _, e := range episodes {
		if e.Err != nil {
			return fmt.Errorf("rollout: task %s: %w", e.Task.Name, e.Err)
		}
	}
	return nil
}

func anyActive(episodes []*Episode) bool {
	for _, e := range episodes {
		if !e.Done {
			return true
		}
	}
	return false
}

// MakeEnvs returns n environments from factory.
func MakeEnvs(factory EnvFactory, n int) ([]Env, error) {
	envs := make([]Env, n)
	for i := range envs {
		env, err := factory()
		if err != nil {
			return nil, fmt.Errorf("env factory: %w", err)
		}
		envs[i] = env
	}
	return envs, nil
}

// SampleGroups is arl.sample_groups: cfg.GroupSize episodes of each task (in order, groups contiguous), sampled
// in one lockstep batch with factory's environments (nil: MakeEnv(cfg)).
func SampleGroups(model *gomlxmodel.Model, factory EnvFactory, tasks []Task, tok *Tokenizer, cfg RLConfig,
	rng *rand.Rand) ([]Trajectory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if factory == nil {
		factory = EnvFactoryOf(cfg)
	}
	var batch []Task
	for _, t := range tasks {
		for range cfg.GroupSize {
			batch = append(batch, t)
		}
	}
	envs, err := MakeEnvs(factory, len(batch))
	if err != nil {
		return nil, err
	}
	return RolloutBatch(model, envs, batch, tok, cfg.MaxTurns, cfg.Temperature, rng)
}

// SampleStep is arl.sample_step: one training step's episodes. It draws cfg.PromptsPerStep distinct tasks with
// rng, renames each episode's identifiers with a generator seeded from rng, and samples cfg.GroupSize episodes
// per task. It returns the trajectories and the renamed task of each.
func SampleStep(model *gomlxmodel.Model, factory EnvFactory, tasks []Task, tok *Tokenizer, cfg RLConfig,
	rng *rand.Rand) ([]Trajectory, []Task, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	batch, err := StepTasks(tasks, cfg, rng)
	if err != nil {
		return nil, nil, fmt.Errorf("sample step: %w", err)
	}
	if factory == nil {
		factory = EnvFactoryOf(cfg)
	}
	envs, err := MakeEnvs(factory, len(batch))
	if err != nil {
		return nil, nil, err
	}
	trajs, err := RolloutBatch(model, envs, batch, tok, cfg.MaxTurns, cfg.Temperature, rng)
	return trajs, batch, err
}

// StepTasks draws the tasks of one training step: cfg.PromptsPerStep distinct tasks in an order drawn from rng,
// each cfg.GroupSize times in a row, renamed with a generator seeded from rng.
func StepTasks(tasks []Task, cfg RLConfig, rng *rand.Rand) ([]Task, error) {
	if len(tasks) < cfg.PromptsPerStep {
		return nil, fmt.Errorf("%d tasks, want at least PromptsPerStep = %d", len(tasks), cfg.PromptsPerStep)
	}
	order := rng.Perm(len(tasks))[:cfg.PromptsPerStep]
	names := NewRNG(rng.Uint64())
	var batch []Task
	for _, i := range order {
		for range cfg.GroupSize {
			batch = append(batch, RandomizeNames(tasks[i], names))
		}
	}
	return batch, nil
}

// Evaluate is arl.evaluate: behavior statistics of n episodes per task, on tasks renamed with a generator seeded
// from rng, in cfg's environment (or factory's, when not nil) at cfg's temperature.
func Evaluate(model *gomlxmodel.Model, tasks []Task, tok *Tokenizer, n int, rng *rand.Rand, cfg RLConfig,
	factory EnvFactory) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	if factory == nil {
		factory = EnvFactoryOf(cfg)
	}
	names := NewRNG(rng.Uint64())
	var batch []Task
	for _, t := range tasks {
		for range n {
			batch = append(batch, RandomizeNames(t, names))
		}
	}
	envs, err := MakeEnvs(factory, len(batch))
	if err != nil {
		return Stats{}, err
	}
	trajs, err := RolloutBatch(model, envs, batch, tok, cfg.MaxTurns, cfg.Temperature, rng)
	if err != nil {
		return Stats{}, err
	}
	return BehaviorStats(trajs), nil
}
