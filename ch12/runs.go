package ch12

import (
	"fmt"
	"math/rand/v2"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// The chapter's training runs, defined once for the notebooks and the commands that repeat them (cmd/seeds): a
// run asked for by a notebook's cell and by a command under the same settings has one key, so the second loads
// what the first stored. The functions a run takes (an advantage, a critic's warm-up, a context policy and its
// step) are keyed by their code (agentrl.FuncCode): a notebook's unedited copy of agentrl's code keys as agentrl's
// own function, and an edited copy keys apart.

// Steps is the length of the chapter's training runs, the book's 40 GRPO steps.
const Steps = 40

// Env is the environment of a run: Name, part of the run's key, names what New makes. The zero Env is the
// configuration's own environment (agentrl.MakeEnv). Tasks, when not nil, replaces the training tasks.
type Env struct {
	Name  string
	New   agentrl.EnvFactory
	Tasks []agentrl.Task
}

// Run trains (or loads) the chapter's run of cfg: Steps steps of GRPO's loop (agentrl.TrainedRun) on a copy of the
// base agent, on the training tasks, in cfg's environment. opts are TrainedRun's seams.
func (c *Chapter) Run(cfg agentrl.RLConfig, opts ...agentrl.RunOption) (*agentrl.Run, error) {
	return c.RunIn(Env{}, cfg, opts...)
}

// RunIn is Run in env's environments (and on its tasks, if it names them).
func (c *Chapter) RunIn(env Env, cfg agentrl.RLConfig, opts ...agentrl.RunOption) (*agentrl.Run, error) {
	base, err := c.Base()
	if err != nil {
		return nil, err
	}
	tasks := c.Train
	if env.Tasks != nil {
		tasks = env.Tasks
	}
	return agentrl.TrainedRun(c.Store, base, c.Tok, tasks, cfg, Steps, env.Name, env.New, opts...)
}

// WarmFunc warms up a critic for base on tasks under cfg's rewards (12.2's WarmCritic).
type WarmFunc func(base *gomlxmodel.Model, tasks []agentrl.Task, tok *agentrl.Tokenizer, cfg agentrl.RLConfig) (*gomlxmodel.Critic, error)

// Critic returns warm's critic for the base agent on the training tasks under cfg (12.2's warmed-up critic),
// computed once and stored, keyed by the base agent, the tasks, cfg and warm's code.
func (c *Chapter) Critic(cfg agentrl.RLConfig, warm WarmFunc) (*gomlxmodel.Critic, error) {
	if warm == nil {
		return nil, fmt.Errorf("ch12: Critic: warm is nil: pass the warm-up (agentrl.WarmCritic)")
	}
	base, parts, err := c.fromBase(warm)
	if err != nil {
		return nil, err
	}
	key := agentrl.Key("12.2/critic", append([]any{c.Train, c.Tok.Itos, cfg}, parts...)...)
	return agentrl.Cached(c.Store, key, agentrl.CriticCodec(), func() (*gomlxmodel.Critic, error) {
		return warm(base, c.Train, c.Tok, cfg)
	})
}

// ContextView is a context policy's type: agentrl.ContextPolicy, or a notebook's copy of it.
type ContextView interface {
	~func(ids []int32, owner []agentrl.Owner, turn []int32, k int) []int32
}

// ContextRun trains (or loads) 12.4's train_context: Steps calls of step on a copy of the base agent, on the training
// tasks, every call seeing viewOf's view, drawing from one generator seeded with cfg.Seed; its history holds each
// step's episode statistics (step is agentrl.ContextStep, or a notebook's copy of it, with its own ContextPolicy). It
// is stored and resumable after an interrupt (agentrl.ResumableRun). view names viewOf in the key, which also holds
// the code of viewOf and step: a function's code does not show the values it captures (KeepObs(1) and KeepObs(0)
// share theirs), so view must tell them apart ("keep_obs=1").
func ContextRun[V ContextView](c *Chapter, view string, viewOf V,
	step func(*gomlxmodel.Model, []agentrl.Task, *agentrl.Tokenizer, V, agentrl.RLConfig, *rand.Rand) ([]agentrl.Trajectory, error),
	cfg agentrl.RLConfig) (*agentrl.Run, error) {
	if viewOf == nil || step == nil {
		return nil, fmt.Errorf("ch12: ContextRun(%q): pass a context policy (agentrl.KeepObs) and its step (agentrl.ContextStep)", view)
	}
	base, parts, err := c.fromBase(viewOf, step)
	if err != nil {
		return nil, err
	}
	key := agentrl.Key("12.4/train_context", append([]any{c.Train, c.Tok.Itos, cfg, Steps, view}, parts...)...)
	return agentrl.ResumableRun(c.Store, key, agentrl.Loop{Name: "train_context", Steps: Steps, Seed: cfg.Seed,
		Start: func() (*agentrl.Run, error) {
			policy, err := base.Clone()
			return &agentrl.Run{Policy: policy}, err
		},
		Step: func(run *agentrl.Run, i int, rng *rand.Rand) error {
			run.Policy.SetAnchor(base) // cfg.KLCoef's reference, also after a resume
			trajs, err := step(run.Policy, c.Train, c.Tok, viewOf, cfg, rng)
			if err == nil {
				run.History = append(run.History, agentrl.StepStats{Step: i, Stats: agentrl.BehaviorStats(trajs)})
			}
			return err
		},
	})
}

// fromBase returns the base agent and the parts of the key of a result computed from it by the functions fns: the
// base agent's fingerprint and the code of each function (agentrl.FuncCode).
func (c *Chapter) fromBase(fns ...any) (*gomlxmodel.Model, []any, error) {
	base, err := c.Base()
	if err != nil {
		return nil, nil, err
	}
	id, err := agentrl.Fingerprint(base)
	if err != nil {
		return nil, nil, err
	}
	parts := []any{id}
	for _, f := range fns {
		code, err := agentrl.FuncCode(f)
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, code)
	}
	return base, parts, nil
}
