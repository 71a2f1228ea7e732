package ch12

import (
	"fmt"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/runs"
	"github.com/agentrl-go/agentrl/store"
)

// The chapter's training runs, defined once for the notebooks and the commands that repeat them (cmd/seeds). A run
// is a value (agentrl.Loop): its key is that value, with the base agent it starts from and the chapter's tasks and
// tokenizer (runs.Train), so a run asked for by a notebook's cell and by a command under the same settings has one
// key, and any change of a setting, an argument or the code a run reaches trains anew.

// Steps is the length of the chapter's training runs, the book's 40 GRPO steps.
const Steps = 40

// Run is the book's arl.train_rl(policy, train_tasks, tok, cfg, 40, ...) for the chapter: Steps steps of GRPO's
// loop (agentrl.GRPO) on a copy of the chapter's base agent (Base), on the training tasks, in the chapter's
// environment (In's; else cfg's own), logging every episode. opts are GRPO's seams (agentrl.WithAdvantages,
// WithSchedule, WithCritic, InEnv, OnTasks, ...). The run is trained once and stored (runs.Train); the options are
// checked before the base agent is made or loaded.
func (c *Chapter) Run(cfg agentrl.RLConfig, opts ...agentrl.RunOption) (*agentrl.Run, error) {
	g, err := agentrl.GRPO{Tasks: c.Train, Tok: c.Tok, Cfg: cfg, Steps: Steps, Env: c.env, LogEpisodes: true}.With(opts...)
	if err != nil {
		return nil, err
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	return c.RunLoop(g)
}

// RunLoop trains (or loads) loop from the chapter's base agent (runs.Train), with the chapter's tasks and tokenizer
// in its key besides loop's value and code: a loop written in a cell may read them. loop is checked (when it has a
// Check method) before the base agent is made or loaded.
func (c *Chapter) RunLoop(loop agentrl.Loop) (*agentrl.Run, error) {
	if err := runs.Check(loop); err != nil { // refused before the base agent is made
		return nil, err
	}
	base, err := c.Base()
	if err != nil {
		return nil, err
	}
	return runs.Train(c.Store, base, loop, c.Train, c.HeldOutTasks, c.Tok)
}

// WarmFunc warms up a critic for base on tasks under cfg's rewards (12.2's WarmCritic).
type WarmFunc func(base *gomlxmodel.Model, tasks []agentrl.Task, tok *agentrl.Tokenizer, cfg agentrl.RLConfig) (*gomlxmodel.Critic, error)

// Critic returns warm's critic for the base agent on the training tasks under cfg (12.2's warmed-up critic),
// computed once and stored, keyed by the base agent, the tasks, the tokenizer, cfg and warm's code (a warm-up that
// captures values its code does not determine is refused).
func (c *Chapter) Critic(cfg agentrl.RLConfig, warm WarmFunc) (*gomlxmodel.Critic, error) {
	if warm == nil {
		return nil, fmt.Errorf("ch12: Critic: warm is nil: pass the warm-up (agentrl.WarmCritic)")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, err := codekey.Of(warm); err != nil { // refused before the base agent is made
		return nil, fmt.Errorf("ch12: Critic: %w", err)
	}
	base, err := c.Base()
	if err != nil {
		return nil, err
	}
	key, err := codekey.KeyOf("12.2/critic", base, warm, c.Train, c.Tok, cfg)
	if err != nil {
		return nil, fmt.Errorf("ch12: Critic: %w", err)
	}
	return store.Cached(c.Store, key, runs.CriticCodec(base.Engine()), func() (*gomlxmodel.Critic, error) {
		return warm(base, c.Train, c.Tok, cfg)
	})
}
