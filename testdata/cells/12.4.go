package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/chart"
	"github.com/agentrl-go/agentrl/chart/nbdisplay"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

func must[T any](v T, err error) T { return ch12.Must(v, err) }

func must2[T, U any](t T, u U, err error) (T, U) { return t, ch12.Must(u, err) }

var ch = must(ch12.Setup())

var tok, trainTasks, heldoutTasks, store = ch.Tok, ch.Train, ch.HeldOutTasks, ch.Store

func rlBase() *gomlxmodel.Model { return must(ch.Base()) }

func heldOut(policy *gomlxmodel.Model, cfg agentrl.RLConfig) agentrl.Stats {
	return must(ch.HeldOut(policy, cfg))
}

// ContextView is the chapter's context_view: the token ids the policy sees before call k. Tool tokens of turns older
// than the last keepObs are dropped; keepObs < 0 means None, the full context.
func ContextView(ids []int32, owner []agentrl.Owner, turn []int32, k, keepObs int) []int32 {
	if keepObs < 0 {
		return append([]int32(nil), ids...)
	}
	var view []int32
	for i, id := range ids {
		if !(owner[i] == agentrl.OwnerTool && int(turn[i]) < k-keepObs) {
			view = append(view, id)
		}
	}
	return view
}

// ContextPolicy is a context policy: View returns the token ids the policy sees before call k of an episode whose
// tokens so far are ids, with their owners and turns. View must not modify its arguments; the view it returns may
// share memory with ids and is not modified by its callers. A context policy is a value, keyed with the run that
// holds it: a policy of one's own is a type with a View method.
type ContextPolicy interface {
	View(ids []int32, owner []agentrl.Owner, turn []int32, k int) []int32
}

// KeepObs is the chapter's context policy, the book's keep_obs: the last n observations (n < 0: None, the full
// context).
type KeepObs int

// View is ContextView with keepObs = n.
func (n KeepObs) View(ids []int32, owner []agentrl.Owner, turn []int32, k int) []int32 {
	return ContextView(ids, owner, turn, k, int(n))
}

// CallSample is call_sample: one call as its own Trajectory, ids = view + call, with the action mask and the
// sampling log-probs on the call's tokens only. Reward and Info are the episode's.
func CallSample(episode agentrl.Trajectory, view, callIDs []int32, callLogp []float32) agentrl.Trajectory {
	ids := append(append([]int32{}, view...), callIDs...)
	mask, logp := make([]float32, len(ids)-1), make([]float32, len(ids)-1)
	for i := range callIDs {
		mask[len(mask)-len(callIDs)+i] = 1
		logp[len(logp)-len(callIDs)+i] = callLogp[i]
	}
	return agentrl.Trajectory{IDs: ids, Turn: make([]int32, len(ids)), ActionMask: mask, Logp: logp,
		Reward: episode.Reward, Info: episode.Info}
}

// ContextRolloutBatch is context_rollout_batch: lockstep episodes whose every call is generated from viewOf's view
// of the episode so far (KeepObs(-1): the full context). It returns the episodes and the per-call samples (view,
// call) in completion order. A row's KV cache is kept while its view only grows and is rebuilt from the view when
// the policy removed tokens from it.
func ContextRolloutBatch(model *gomlxmodel.Model, envs []agentrl.Env, tasks []agentrl.Task, tok *agentrl.Tokenizer, viewOf ContextPolicy,
	maxTurns int, temperature float64, rng *rand.Rand) ([]agentrl.Trajectory, []agentrl.IndexedSample, error) {
	switch V := model.Config().Vocab; {
	case len(envs) != len(tasks):
		return nil, nil, fmt.Errorf("context rollout: %d envs for %d tasks", len(envs), len(tasks))
	case viewOf == nil:
		return nil, nil, fmt.Errorf("context rollout: the context policy is nil: pass KeepObs(-1) for the full context")
	case V != tok.VocabSize():
		return nil, nil, fmt.Errorf("context rollout: model vocabulary %d != tokenizer vocabulary %d", V, tok.VocabSize())
	}
	episodes := make([]*agentrl.Episode, len(envs))
	for b := range envs {
		episodes[b] = agentrl.NewEpisode(envs[b], tasks[b], tok, maxTurns, model.Config().MaxLen)
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
			id, lp := agentrl.SampleNext(logits[b*V:(b+1)*V], temperature, rng)
			c := &calls[b]
			c.ids, c.logp = append(c.ids, id), append(c.logp, lp)
			if id == tok.CallEndID || len(c.ids) == agentrl.MaxCallTokens {
				samples = append(samples, finished{b, *c})
				e.Act(c.ids, c.logp)
				cached[b] = append(cached[b], c.ids[:len(c.ids)-1]...)
				calls[b] = call{}
				continue
			}
			dec.Feed(b, []int32{id})
		}
	}
	trajs := make([]agentrl.Trajectory, len(episodes))
	for b, e := range episodes {
		if e.Err != nil { // a prompt or an observation with words outside the vocabulary
			return nil, nil, fmt.Errorf("context rollout: task %s: %w", e.Task.Name, e.Err)
		}
		trajs[b] = agentrl.MakeTrajectory(e)
	}
	out := make([]agentrl.IndexedSample, len(samples))
	for i, s := range samples {
		out[i] = agentrl.IndexedSample{Episode: s.b, Sample: CallSample(trajs[s.b], s.view, s.ids, s.logp)}
	}
	return trajs, out, nil
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

func anyActive(episodes []*agentrl.Episode) bool {
	for _, e := range episodes {
		if !e.Done {
			return true
		}
	}
	return false
}

// TrainContext is train_context as a Loop: Steps GRPO steps (ContextStep) on a copy of the base model, every call
// seeing Context's view of its episode (the book's keep_obs: KeepObs(n); KeepObs(-1): the full context), with Cfg
// (the book's RLConfig(seed=seed)). Its generator is seeded with Cfg.Seed.
type TrainContext struct {
	Tasks   []agentrl.Task
	Tok     *agentrl.Tokenizer
	Cfg     agentrl.RLConfig
	Steps   int
	Context ContextPolicy
}

// Plan is t's steps and seed.
func (t TrainContext) Plan() (int, uint64) { return t.Steps, t.Cfg.Seed }

// Start copies base.
func (t TrainContext) Start(base *gomlxmodel.Model) (*agentrl.Run, error) {
	if err := t.Cfg.Validate(); err != nil {
		return nil, err
	}
	if t.Context == nil {
		return nil, fmt.Errorf("train context: the context policy is nil: pass KeepObs(-1) for the full context")
	}
	policy, err := base.Clone()
	return &agentrl.Run{Policy: policy}, err
}

// Step is one step of train_context, recording the step's episode statistics.
func (t TrainContext) Step(run *agentrl.Run, step int, rng *rand.Rand) error {
	if run.Base != nil {
		run.Policy.SetAnchor(run.Base) // cfg.KLCoef's reference, also after a resume
	}
	trajs, err := ContextStep(run.Policy, t.Tasks, t.Tok, t.Context, t.Cfg, rng)
	if err != nil {
		return err
	}
	run.History = append(run.History, agentrl.StepStats{Step: step, Stats: agentrl.BehaviorStats(trajs)})
	return nil
}

// ContextStep is one step of train_context: it samples a step's episodes with ContextRolloutBatch, every call
// generated from viewOf's view, and trains policy in place on the per-call samples, each call carrying the group
// advantage of its episode. It draws only from rng and returns the episodes.
func ContextStep(policy *gomlxmodel.Model, tasks []agentrl.Task, tok *agentrl.Tokenizer, viewOf ContextPolicy, cfg agentrl.RLConfig,
	rng *rand.Rand) ([]agentrl.Trajectory, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	batchTasks, err := agentrl.StepTasks(tasks, cfg, rng)
	if err != nil {
		return nil, err
	}
	envs, err := agentrl.MakeEnvs(agentrl.EnvFactoryOf(cfg), len(batchTasks))
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
	episodeAdv := agentrl.ComputeAdvantages(rewards, cfg.GroupSize) // [E]
	calls, adv := make([]agentrl.Trajectory, len(samples)), make([]float32, len(samples))
	for i, s := range samples {
		calls[i], adv[i] = s.Sample, episodeAdv[s.Episode]
	}
	batch := agentrl.Collate(calls, tok.PadID)
	if _, err := agentrl.RLUpdate(policy, batch, agentrl.BroadcastAdvantages(adv, batch.Mask()), cfg, rng); err != nil {
		return nil, err
	}
	return trajs, nil
}

// EvaluateContext is evaluate_context: behavior statistics of nSamples episodes per task, sampled with
// viewOf's view by a generator seeded with seed, on tasks renamed by a generator of their own (seeded from the
// first's first draw, as Evaluate does: with the full context the two give the same episodes).
func EvaluateContext(model *gomlxmodel.Model, tasks []agentrl.Task, tok *agentrl.Tokenizer, viewOf ContextPolicy, nSamples int,
	seed uint64, cfg agentrl.RLConfig) (agentrl.Stats, error) {
	if err := cfg.Validate(); err != nil {
		return agentrl.Stats{}, err
	}
	rng := agentrl.NewRNG(seed)
	names := agentrl.NewRNG(rng.Uint64())
	var batchTasks []agentrl.Task
	var envs []agentrl.Env
	for _, t := range tasks {
		for range nSamples {
			env, err := agentrl.MakeEnv(cfg)
			if err != nil {
				return agentrl.Stats{}, err
			}
			batchTasks, envs = append(batchTasks, agentrl.RandomizeNames(t, names)), append(envs, env)
		}
	}
	trajs, _, err := ContextRolloutBatch(model, envs, batchTasks, tok, viewOf, cfg.MaxTurns, cfg.Temperature, rng)
	if err != nil {
		return agentrl.Stats{}, err
	}
	return agentrl.BehaviorStats(trajs), nil
}

var contextPolicies = []struct {
	name   string
	policy func() *gomlxmodel.Model
}{
	{"full", func() *gomlxmodel.Model {
		return must(ch.Run(agentrl.DefaultRLConfig())).Policy
	}},
	{"keep_obs=1", func() *gomlxmodel.Model {
		return must(ch.RunLoop(TrainContext{Tasks: trainTasks, Tok: tok, Cfg: agentrl.DefaultRLConfig(), Steps: ch12.Steps, Context: KeepObs(1)})).Policy
	}},
}

// keepName prints keepObs as the book does (None for the full context).
func keepName(keepObs int) string {
	if keepObs < 0 {
		return "None"
	}
	return fmt.Sprint(keepObs)
}

// callSequences samples 16 held-out episodes per task under ContextView(keepObs), as EvaluateContext does, and
// counts their call sequences.
func callSequences(policy *gomlxmodel.Model, keepObs int) map[string]int {
	cfg, names := agentrl.DefaultRLConfig(), agentrl.NewRNG(7)
	var tasks []agentrl.Task
	var envs []agentrl.Env
	for _, t := range heldoutTasks {
		for range 16 {
			tasks, envs = append(tasks, agentrl.RandomizeNames(t, names)), append(envs, must(agentrl.MakeEnv(cfg)))
		}
	}
	trajs, _, err := ContextRolloutBatch(policy, envs, tasks, tok, KeepObs(keepObs), cfg.MaxTurns, cfg.Temperature, agentrl.NewRNG(7))
	if err != nil {
		panic(err)
	}
	counts := map[string]int{}
	for _, t := range trajs {
		calls := agentrl.CallTexts(t, tok)
		for i, c := range calls {
			if op, ok := strings.CutPrefix(c, "edit "); ok && slices.Contains(agentrl.Ops(), op) {
				calls[i] = "edit"
			}
		}
		seq := strings.Join(calls, " | ")
		if t.Info.Submitted && t.Info.HiddenPass {
			seq += "  (pass)"
		}
		counts[seq]++
	}
	return counts
}

// nextCall scripts calls (each a tool; an edit uses the task's right op) on the held-out tasks, 16 renamings
// each, and returns the mean probability policy gives each next call when it sees the episode through
// ContextView(keepObs): test, submit, read, any edit, and anything else.
func nextCall(policy *gomlxmodel.Model, script []string, keepObs int) []float64 {
	cfg, names := agentrl.DefaultRLConfig(), agentrl.NewRNG(7)
	calls := [][]int32{tok.EncodeCall(agentrl.ToolTest), tok.EncodeCall(agentrl.ToolSubmit), tok.EncodeCall(agentrl.ToolRead)}
	for _, op := range agentrl.Ops() {
		calls = append(calls, tok.EncodeCall(agentrl.ToolEdit, op))
	}
	var views [][]int32
	for _, t := range heldoutTasks {
		for range 16 {
			task := agentrl.RandomizeNames(t, names)
			e := agentrl.NewEpisode(must(agentrl.MakeEnv(cfg)), task, tok, cfg.MaxTurns, agentrl.ContextLen)
			for _, tool := range script {
				if tool == agentrl.ToolEdit {
					e.Act(tok.EncodeCall(tool, task.Op), nil)
				} else {
					e.Act(tok.EncodeCall(tool), nil)
				}
			}
			views = append(views, ContextView(e.IDs, e.Owner, e.Turn, len(e.Actions), keepObs))
		}
	}
	mean := make([]float64, 5) // test, submit, read, edit, other
	for _, p := range must(agentrl.CallProbs(policy, views, calls, tok.PadID)) {
		edit := 0.0
		for _, q := range p[3:] {
			edit += q
		}
		for i, q := range []float64{p[0], p[1], p[2], edit, 1 - p[0] - p[1] - p[2] - edit} {
			mean[i] += q / float64(len(views))
		}
	}
	return mean
}

func cell2() {
	fmt.Printf("vocabulary %d tokens | %d training tasks, %d held-out | TinyAgent with %d parameters\n",
		tok.VocabSize(), len(trainTasks), len(heldoutTasks), rlBase().NumParams())
}

func cell5() {
	cfg := agentrl.DefaultRLConfig()
	var tasks []agentrl.Task
	for _, t := range trainTasks[:4] {
		for range 4 {
			tasks = append(tasks, t)
		}
	}
	envs := func() []agentrl.Env {
		envs := make([]agentrl.Env, len(tasks))
		for i := range envs {
			envs[i] = must(agentrl.MakeEnv(cfg))
		}
		return envs
	}
	reference := must(agentrl.RolloutBatch(rlBase(), envs(), tasks, tok, 6, 1, agentrl.NewRNG(0)))
	episodes, samples := must2(ContextRolloutBatch(rlBase(), envs(), tasks, tok, KeepObs(-1), 6, 1, agentrl.NewRNG(0)))
	identical := true
	for i := range reference {
		identical = identical && slices.Equal(reference[i].IDs, episodes[i].IDs)
	}
	fmt.Printf("identical episodes: %t | calls: %d\n", identical, len(samples))
	turns := 0
	for _, e := range episodes {
		turns += e.Info.NTurns
	}
	fmt.Printf("turns of the 16 episodes: %d\n", turns) // one call per turn

	// Score the episodes whole and the calls one by one, with the same model.
	scored := func(trajs []agentrl.Trajectory) []float64 {
		batch := agentrl.Collate(trajs, tok.PadID)
		logp := agentrl.Rows(must(rlBase().SequenceLogProbs(batch.IDs, batch.B, batch.T)), batch.T-1)
		sums := make([]float64, len(trajs))
		for b, m := range batch.Mask() {
			for j := range m {
				sums[b] += float64(logp[b][j] * m[j])
			}
		}
		return sums
	}
	perEpisode, perCall := scored(episodes), make([]float64, len(episodes))
	calls := make([]agentrl.Trajectory, len(samples))
	for i, s := range samples {
		calls[i] = s.Sample
	}
	for i, lp := range scored(calls) {
		perCall[samples[i].Episode] += lp
	}
	worst := 0.0
	for b := range perEpisode {
		worst = max(worst, math.Abs(perEpisode[b]-perCall[b]))
	}
	fmt.Printf("max |log p(episode) - sum of per-call log p| = %.1e\n", worst)
}

func cell9() {
	var table [][]agentrl.Stats
	for _, tp := range contextPolicies {
		policy := tp.policy()
		var row []agentrl.Stats
		for _, evalKeep := range []int{-1, 1, 0} {
			s := must(EvaluateContext(policy, heldoutTasks, tok, KeepObs(evalKeep), 16, 7, agentrl.DefaultRLConfig()))
			row = append(row, s)
			fmt.Printf("trained %-10s evaluated keep_obs=%-4s | pass %.3f | reads %.2f | tests %.2f | turns %.2f\n",
				tp.name, keepName(evalKeep), s.PassRate, s.Reads, s.Tests, s.Turns)
		}
		table = append(table, row)
	}
	heat := func(title, format string, f func(agentrl.Stats) float64, hi float64) chart.Heatmap {
		h := chart.Heatmap{Title: title, Rows: []string{"trained full", "trained keep_obs=1"},
			Cols: []string{"eval full", "eval keep_obs=1", "eval keep_obs=0"}, Format: format, Min: 0, Max: hi}
		for _, row := range table {
			var vals []float64
			for _, s := range row {
				vals = append(vals, f(s))
			}
			h.Values = append(h.Values, vals)
		}
		return h
	}
	fig := chart.Heatmaps("Figure 12.3: held-out behavior by training and evaluation context", []chart.Heatmap{
		heat("pass rate", "%.3f", func(s agentrl.Stats) float64 { return s.PassRate }, 1),
		heat("tests per episode", "%.2f", func(s agentrl.Stats) float64 { return s.Tests }, 1),
	})
	if err := nbdisplay.Display(fig); err != nil {
		panic(err)
	}
}

func cell11() {
	ch12.Check(ch.Printed("12.4/call sequences", func(w io.Writer) error { // stored, keyed by this code
		for _, tp := range contextPolicies {
			policy := tp.policy()
			for _, evalKeep := range []int{-1, 1} {
				counts := callSequences(policy, evalKeep)
				seqs := slices.Collect(maps.Keys(counts))
				slices.SortFunc(seqs, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
				fmt.Fprintf(w, "trained %-10s evaluated keep_obs=%s\n", tp.name, keepName(evalKeep))
				for _, s := range seqs[:min(5, len(seqs))] {
					fmt.Fprintf(w, "  %3d  %s\n", counts[s], s)
				}
			}
		}
		return nil
	}))
}

func cell13() {
	ch12.Check(ch.Printed("12.4/next call", func(w io.Writer) error { // stored, keyed by this code
		policies := []struct {
			name   string
			policy *gomlxmodel.Model
		}{{"base agent", rlBase()}, {"trained full", contextPolicies[0].policy()}, {"trained keep_obs=1", contextPolicies[1].policy()}}
		fmt.Fprintln(w, "policy             after the calls   seen with     | next call: test  submit  read  edit  other")
		for _, p := range policies {
			for _, c := range []struct {
				script  []string
				keepObs int
			}{
				{[]string{agentrl.ToolRead, agentrl.ToolEdit}, -1},
				{[]string{agentrl.ToolRead, agentrl.ToolEdit}, 1},
				{[]string{agentrl.ToolRead, agentrl.ToolEdit}, 0},
				{[]string{agentrl.ToolEdit}, -1},
			} {
				q := nextCall(p.policy, c.script, c.keepObs)
				fmt.Fprintf(w, "%-18s %-17s keep_obs=%-4s |           %.2f    %.2f  %.2f  %.2f   %.2f\n",
					p.name, strings.Join(c.script, ", "), keepName(c.keepObs), q[0], q[1], q[2], q[3], q[4])
			}
		}
		return nil
	}))
}

func main() {}
