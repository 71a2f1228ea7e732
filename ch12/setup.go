package ch12

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/chart/nbdisplay"
	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/runs"
	"github.com/agentrl-go/agentrl/store"
)

// HeldOutEpisodes is the number of episodes per held-out task of HeldOut, the book's held_out.
const HeldOutEpisodes = 16

// HeldOutSeed seeds HeldOut's generator.
const HeldOutSeed = 7

// Chapter is what every section of the chapter starts from.
type Chapter struct {
	Engine       *gomlxmodel.Engine // what every model of the chapter computes on (gomlxmodel.DefaultOptions)
	Tok          *agentrl.Tokenizer // over every task (training and held-out)
	Train        []agentrl.Task     // the 20 training tasks
	HeldOutTasks []agentrl.Task     // the 10 held-out tasks
	Store        *store.Store       // the result store ($AGENTRL_CACHE, else the user's cache directory)

	base   func() (*gomlxmodel.Model, error)
	recipe agentrl.BaseConfig // the base agent's
	extra  []string           // words the tokenizer has beyond the tasks' and the gym's (WithWords)
}

// Setup makes the chapter's engine from the program's environment (gomlxmodel.DefaultOptions), builds its
// tokenizer and tasks and opens the default result store. It trains and loads nothing:
// the base agent is made on the first call of Base. In a GoNB cell program it also makes the Status display the
// observer of the store's events (its Observe), redrawn every NotebookProgressInterval.
func Setup() (*Chapter, error) { return SetupWith(agentrl.DefaultBaseConfig()) }

// SetupWith is Setup with base as the recipe of the RL base agent (another draw, other demonstrations), which Base
// then makes or loads; every run of the chapter starts from it.
func SetupWith(base agentrl.BaseConfig) (*Chapter, error) {
	s, err := store.Default()
	if err != nil {
		return nil, err
	}
	return SetupIn(s, base)
}

// SetupIn is SetupWith on store instead of the default result store (a command's temporary store, for one).
func SetupIn(s *store.Store, base agentrl.BaseConfig) (*Chapter, error) {
	if s == nil {
		return nil, errors.New("ch12: SetupIn: the store is nil: open one with store.Open")
	}
	all, err := agentrl.MakeTasks(agentrl.SplitAll)
	if err != nil {
		return nil, err
	}
	train, err := agentrl.MakeTasks(agentrl.SplitTrain)
	if err != nil {
		return nil, err
	}
	heldOut, err := agentrl.MakeTasks(agentrl.SplitHeldout)
	if err != nil {
		return nil, err
	}
	eng, err := gomlxmodel.NewEngine(gomlxmodel.DefaultOptions())
	if err != nil {
		return nil, err
	}
	installStatus(s)
	c := &Chapter{Engine: eng, Tok: agentrl.BuildTokenizer(all), Train: train, HeldOutTasks: heldOut, Store: s}
	return c.WithBase(base)
}

// WithBase returns the chapter with base as the recipe of its RL base agent: the same tokenizer, tasks and store,
// and runs that start from that agent, made or loaded on the first call of Base.
func (c *Chapter) WithBase(base agentrl.BaseConfig) (*Chapter, error) {
	if err := base.Validate(); err != nil {
		return nil, err
	}
	with := &Chapter{Engine: c.Engine, Tok: c.Tok, Train: c.Train, HeldOutTasks: c.HeldOutTasks, Store: c.Store,
		recipe: base, extra: c.extra}
	with.base = sync.OnceValues(func() (*gomlxmodel.Model, error) {
		return runs.Base(with.Store, agentrl.BaseRun{Engine: with.Engine, Config: base, Tasks: with.Train, Tok: with.Tok})
	})
	return with, nil
}

// WithWords returns the chapter with words added to its tokenizer's vocabulary (the words of an environment's own
// observations, which would otherwise be an error: agentrl.UnknownWordsError), and so with a base agent of its own
// for the larger vocabulary, trained with the same recipe (minutes, once) on the first call of Base. That agent
// knows the words but has never seen them in an observation: for an environment that shows them, train its base
// agent in that environment (BaseIn). Words the vocabulary has already change nothing: the chapter is returned as
// it is.
func (c *Chapter) WithWords(words ...string) (*Chapter, error) {
	var added []string
	for _, w := range words {
		added = append(added, c.Tok.Unknown(w)...)
	}
	if len(added) == 0 {
		return c, nil
	}
	all := append(append([]agentrl.Task(nil), c.Train...), c.HeldOutTasks...)
	with, err := c.WithBase(c.recipe)
	if err != nil {
		return nil, err
	}
	with.Tok = agentrl.BuildTokenizer(all, append(c.extra, added...)...)
	with.extra = append(c.extra, added...)
	return with, nil
}

// BaseIn is the RL base agent of an environment of one's own: trained as Base's, with the chapter's recipe, tasks
// and tokenizer (WithWords' words included), on demonstrations played in env's environments, so that it has seen
// their observations (a new word in them included) before RL starts. It is made once and stored, keyed by env's
// value and code and the tokenizer; nil env is the chapter's own environment, Base. Train from it with RunInFrom
// or RunLoopFrom, and evaluate with HeldOutIn.
func (c *Chapter) BaseIn(env agentrl.EnvMaker) (*gomlxmodel.Model, error) {
	if env == nil {
		return c.Base()
	}
	return runs.Base(c.Store, agentrl.BaseRun{Engine: c.Engine, Config: c.recipe, Tasks: c.Train, Tok: c.Tok, Env: env})
}

// Base is the RL base agent (arl.make_rl_base), trained with agentrl.DefaultBaseConfig (SetupWith's recipe) on the
// training tasks or loaded from the store, once per process. Callers that train must copy it, as agentrl's loops do.
func (c *Chapter) Base() (*gomlxmodel.Model, error) { return c.base() }

// HeldOut is the book's held_out: behavior statistics of policy on the held-out tasks in cfg's environment,
// HeldOutEpisodes episodes per task sampled with generator seed HeldOutSeed. It is stored like a training run,
// keyed by everything the evaluation reads, so a chapter executed again loads it instead of sampling again.
func (c *Chapter) HeldOut(policy *gomlxmodel.Model, cfg agentrl.RLConfig) (agentrl.Stats, error) {
	return c.HeldOutIn(nil, policy, cfg)
}

// HeldOutIn is HeldOut in env's environments (nil: cfg's own), for a run trained in an environment of its own.
func (c *Chapter) HeldOutIn(env agentrl.EnvMaker, policy *gomlxmodel.Model, cfg agentrl.RLConfig) (agentrl.Stats, error) {
	if policy == nil {
		return agentrl.Stats{}, errors.New("ch12: HeldOut: the policy is nil")
	}
	if err := cfg.Validate(); err != nil {
		return agentrl.Stats{}, err
	}
	e := evaluation{Policy: policy, Cfg: cfg, Env: env, Tasks: c.HeldOutTasks, Tok: c.Tok, N: HeldOutEpisodes, Seed: HeldOutSeed}
	key, err := codekey.KeyOf("held_out", e)
	if err != nil {
		return agentrl.Stats{}, fmt.Errorf("ch12: HeldOut: %w", err)
	}
	return store.Cached(c.Store, key, statsCodec, e.run)
}

// evaluation is one stored agentrl.Evaluate: its key is this value.
type evaluation struct {
	Policy *gomlxmodel.Model
	Cfg    agentrl.RLConfig
	Env    agentrl.EnvMaker
	Tasks  []agentrl.Task
	Tok    *agentrl.Tokenizer
	N      int
	Seed   uint64
}

func (e evaluation) run() (agentrl.Stats, error) {
	var factory agentrl.EnvFactory
	if e.Env != nil {
		factory = e.Env.NewEnv
	}
	return agentrl.Evaluate(e.Policy, e.Tasks, e.Tok, e.N, agentrl.NewRNG(e.Seed), e.Cfg, factory)
}

// statsCodec stores behavior statistics (gob writes float64s exactly).
var statsCodec = store.Codec[agentrl.Stats]{
	Encode: func(w io.Writer, s agentrl.Stats) error { return gob.NewEncoder(w).Encode(s) },
	Decode: func(r io.Reader) (agentrl.Stats, error) {
		var s agentrl.Stats
		err := gob.NewDecoder(r).Decode(&s)
		return s, err
	},
}

// Must returns v, or stops the cell with err: a run that was interrupted (its progress saved) ends the program
// with one line that says so; any other error ends it with one line, "error: " and the error's message (which says
// what to change), and exit status 1, which the notebook shows and its harness counts as a failure.
func Must[T any](v T, err error) T {
	Check(err)
	return v
}

// Check stops the cell with err unless it is nil, as Must does: a cell's way to stop on an error of a call that
// returns only an error.
func Check(err error) {
	if err == nil {
		return
	}
	nbdisplay.SyncWithin(time.Second) // the status block, with its notices, shows first
	if errors.Is(err, store.ErrInterrupted) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(0)
	}
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}
