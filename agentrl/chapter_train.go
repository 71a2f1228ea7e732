package agentrl

// The chapter's own training-side functions (the ones the book marks #@save). The notebooks show this code,
// written from this file (notebooks/harness/savedcode_test.go).

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// PerCallRewards is per_call_rewards: token rewards [B][T-1] with -stepPenalty on the last token of every call
// and the hidden-test verdict on the episode's last policy token.
func PerCallRewards(trajs []Trajectory, mask [][]float32, stepPenalty float64) [][]float32 {
	verdict := make([]float32, len(trajs))
	for b, t := range trajs {
		if t.Info.Submitted && t.Info.HiddenPass {
			verdict[b] = 1
		}
	}
	rewards := OutcomeRewards(verdict, mask)
	for b, m := range mask {
		for j := range m {
			if m[j] == 1 && (j+1 == len(m) || m[j+1] == 0) { // a call ends here
				rewards[b][j] -= float32(stepPenalty)
			}
		}
	}
	return rewards
}

// MaskedWhiten is masked_whiten: x normalized to mean 0 and standard deviation 1 over the positions where mask
// is 1 (one mean and std for the whole batch), and zero elsewhere.
func MaskedWhiten(x, mask [][]float32) [][]float32 {
	mean := MaskedMean(x, mask)
	sq := Zeros(len(x), len(x[0]))
	for b := range x {
		for j := range x[b] {
			sq[b][j] = float32((float64(x[b][j]) - mean) * (float64(x[b][j]) - mean))
		}
	}
	std := math.Sqrt(MaskedMean(sq, mask))
	out := Zeros(len(x), len(x[0]))
	for b := range x {
		for j := range x[b] {
			out[b][j] = float32((float64(x[b][j])-mean)/(std+1e-6)) * mask[b][j]
		}
	}
	return out
}

// CallSample is call_sample: one call as its own Trajectory, ids = view + call, with the action mask and the
// sampling log-probs on the call's tokens only. Reward and Info are the episode's.
func CallSample(episode Trajectory, view, callIDs []int32, callLogp []float32) Trajectory {
	ids := append(append([]int32{}, view...), callIDs...)
	mask, logp := make([]float32, len(ids)-1), make([]float32, len(ids)-1)
	for i := range callIDs {
		mask[len(mask)-len(callIDs)+i] = 1
		logp[len(logp)-len(callIDs)+i] = callLogp[i]
	}
	return Trajectory{IDs: ids, Turn: make([]int32, len(ids)), ActionMask: mask, Logp: logp,
		Reward: episode.Reward, Info: episode.Info}
}

// IndexedSample is one per-call sample with the index of the episode it came from.
type IndexedSample struct {
	Episode int
	Sample  Trajectory
}

// ContextRolloutBatch is context_rollout_batch: lockstep episodes whose every call is generated from viewOf's view
// of the episode so far (KeepObs(-1): the full context). It returns the episodes and the per-call samples (view,
// call) in completion order. A row's KV cache is kept while its view only grows and is rebuilt from the view when
// the policy removed tokens from it.
func ContextRolloutBatch(model *gomlxmodel.Model, envs []Env, tasks []Task, tok *Tokenizer, viewOf ContextPolicy,
	maxTurns int, temperature float64, rng *rand.Rand) ([]Trajectory, []IndexedSample, error) {
	switch V := model.Config().Vocab; {
	case len(envs) != len(tasks):
		return nil, nil, fmt.Errorf("context rollout: %d envs for %d tasks", len(envs), len(tasks))
	case viewOf == nil:
		return nil, nil, fmt.Errorf("context rollout: the context policy is nil: pass KeepObs(-1) for the full context")
	case V != tok.VocabSize():
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
			view := viewOf.View(e.IDs, e.Owner, e.Turn, len(e.Actions)) // a new call starts: fix its view
			if len(view) == 0 {
				return nil, nil, fmt.Errorf("context rollout: the context policy gave episode %d an empty view", b)
			}
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
		if e.Err != nil { // a prompt or an observation with words outside the vocabulary
			return nil, nil, fmt.Errorf("context rollout: task %s: %w", e.Task.Name, e.Err)
		}
		trajs[b] = MakeTrajectory(e)
	}
	out := make([]IndexedSample, len(samples))
	for i, s := range samples {
		out[i] = IndexedSample{Episode: s.b, Sample: CallSample(trajs[s.b], s.view, s.ids, s.logp)}
	}
	return trajs, out, nil
}

// EvaluateContext is evaluate_context: behavior statistics of nSamples episodes per task, sampled with
// viewOf's view by a generator seeded with seed, on tasks renamed by a generator of their own (seeded from the
// first's first draw, as Evaluate does: with the full context the two give the same episodes).
func EvaluateContext(model *gomlxmodel.Model, tasks []Task, tok *Tokenizer, viewOf ContextPolicy, nSamples int,
	seed uint64, cfg RLConfig) (Stats, error) {
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
	trajs, _, err := ContextRolloutBatch(model, envs, batchTasks, tok, viewOf, cfg.MaxTurns, cfg.Temperature, rng)
	if err != nil {
		return Stats{}, err
	}
	return BehaviorStats(trajs), nil
}

// TrainContext is train_context as a Loop: Steps GRPO steps (ContextStep) on a copy of the base model, every call
// seeing Context's view of its episode (the book's keep_obs: KeepObs(n); KeepObs(-1): the full context), with Cfg
// (the book's RLConfig(seed=seed)). Its generator is seeded with Cfg.Seed.
type TrainContext struct {
	Tasks   []Task
	Tok     *Tokenizer
	Cfg     RLConfig
	Steps   int
	Context ContextPolicy
}

// Plan is t's steps and seed.
func (t TrainContext) Plan() (int, uint64) { return t.Steps, t.Cfg.Seed }

// Start copies base.
func (t TrainContext) Start(base *gomlxmodel.Model) (*Run, error) {
	if err := t.Cfg.Validate(); err != nil {
		return nil, err
	}
	if t.Context == nil {
		return nil, fmt.Errorf("train context: the context policy is nil: pass KeepObs(-1) for the full context")
	}
	policy, err := base.Clone()
	return &Run{Policy: policy}, err
}

// Step is one step of train_context, recording the step's episode statistics.
func (t TrainContext) Step(run *Run, step int, rng *rand.Rand) error {
	if run.Base != nil {
		run.Policy.SetAnchor(run.Base) // cfg.KLCoef's reference, also after a resume
	}
	trajs, err := ContextStep(run.Policy, t.Tasks, t.Tok, t.Context, t.Cfg, rng)
	if err != nil {
		return err
	}
	run.History = append(run.History, StepStats{Step: step, Stats: BehaviorStats(trajs)})
	return nil
}

// ContextStep is one step of train_context: it samples a step's episodes with ContextRolloutBatch, every call
// generated from viewOf's view, and trains policy in place on the per-call samples, each call carrying the group
// advantage of its episode. It draws only from rng and returns the episodes.
func ContextStep(policy *gomlxmodel.Model, tasks []Task, tok *Tokenizer, viewOf ContextPolicy, cfg RLConfig,
	rng *rand.Rand) ([]Trajectory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	batchTasks, err := StepTasks(tasks, cfg, rng)
	if err != nil {
		return nil, err
	}
	envs, err := MakeEnvs(EnvFactoryOf(cfg), len(batchTasks))
	if err != nil {
		return nil, err
	}
	trajs, samples, err := ContextRolloutBatch(policy, envs, batchTasks, tok, viewOf, cfg.MaxTurns, cfg.Temperature, rng)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	return trajs, nil
}

func hasPrefix(s, prefix []int32) bool {
	if len(prefix) > len(s) {
		return false
	}
	for i, p := range prefix {
		if s[i] != p {
			return false
		}
	}
	return true
}
