package ch12

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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
	extra  []string           // words the tokenizer has beyond the tasks' and the gym's (Words)
	env    agentrl.EnvMaker   // the chapter's environment (In); nil: each configuration's own
	from   *gomlxmodel.Model  // the agent runs start from (From); nil: the base agent of recipe in env
}

// Setup makes the chapter's engine from the program's environment (gomlxmodel.DefaultOptions), builds its
// tokenizer and tasks and opens the default result store, each as opts say otherwise (Recipe, Words, In, From,
// InStore, OnEngine). It trains and loads nothing: the base agent is made on the first call of Base. In a GoNB
// cell program it also makes the Status display the observer of the store's events, redrawn every
// NotebookProgressInterval.
func Setup(opts ...Option) (*Chapter, error) {
	var o options
	if err := o.apply(opts); err != nil {
		return nil, err
	}
	s, eng := o.store, o.engine
	var err error
	if s == nil {
		if s, err = store.Default(); err != nil {
			return nil, err
		}
	}
	if eng == nil {
		if eng, err = gomlxmodel.NewEngine(gomlxmodel.DefaultOptions()); err != nil {
			return nil, err
		}
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
	installStatus(s)
	c := &Chapter{Engine: eng, Tok: agentrl.BuildTokenizer(all), Train: train, HeldOutTasks: heldOut, Store: s,
		recipe: agentrl.DefaultBaseConfig()}
	return c.with(o)
}

// With returns the chapter as opts change it (Recipe, Words, In, From): the same engine, tasks and store, and a
// base agent of its own where an option changes it, made or loaded on the first call of Base.
func (c *Chapter) With(opts ...Option) (*Chapter, error) {
	var o options
	if err := o.apply(opts); err != nil {
		return nil, err
	}
	if o.store != nil || o.engine != nil {
		return nil, errors.New("ch12: With: InStore and OnEngine are Setup's options: a chapter keeps its store and engine")
	}
	return c.with(o)
}

// with is With of parsed options.
func (c *Chapter) with(o options) (*Chapter, error) {
	w := *c
	newBase := o.recipe != nil || o.env != nil || o.from != nil || w.base == nil
	if o.recipe != nil {
		if err := o.recipe.Validate(); err != nil {
			return nil, err
		}
		w.recipe = *o.recipe
	}
	if len(o.words) > 0 {
		var added []string
		for _, word := range o.words {
			added = append(added, c.Tok.Unknown(word)...)
		}
		if len(added) > 0 {
			all := append(append([]agentrl.Task(nil), c.Train...), c.HeldOutTasks...)
			w.extra = append(slices.Clone(c.extra), added...)
			w.Tok = agentrl.BuildTokenizer(all, w.extra...)
			newBase = true
		} else if !newBase {
			return c, nil // words the vocabulary has already change nothing
		}
	}
	if o.env != nil {
		w.env = o.env
	}
	if o.from != nil {
		w.from = o.from
	} else if newBase {
		w.from = nil
	}
	if !newBase {
		return &w, nil
	}
	from, run := w.from, agentrl.BaseRun{Engine: w.Engine, Config: w.recipe, Tasks: w.Train, Tok: w.Tok, Env: w.env}
	w.base = sync.OnceValues(func() (*gomlxmodel.Model, error) {
		if from != nil {
			return from, nil
		}
		return runs.Base(w.Store, run)
	})
	return &w, nil
}

// Base is the agent the chapter's runs start from: the RL base agent (arl.make_rl_base), trained with the
// chapter's recipe (agentrl.DefaultBaseConfig, or Recipe's) on the training tasks, in the chapter's environment
// where In names one, or loaded from the store, once per process; or From's agent. Callers that train must copy
// it, as agentrl's loops do.
func (c *Chapter) Base() (*gomlxmodel.Model, error) { return c.base() }

// HeldOut is the book's held_out: behavior statistics of policy on the held-out tasks in the chapter's environment
// (In's; else cfg's own), HeldOutEpisodes episodes per task sampled with generator seed HeldOutSeed. It is stored
// like a training run, keyed by everything the evaluation reads, so a chapter executed again loads it instead of
// sampling again.
func (c *Chapter) HeldOut(policy *gomlxmodel.Model, cfg agentrl.RLConfig) (agentrl.Stats, error) {
	if policy == nil {
		return agentrl.Stats{}, errors.New("ch12: HeldOut: the policy is nil")
	}
	if err := cfg.Validate(); err != nil {
		return agentrl.Stats{}, err
	}
	e := evaluation{Policy: policy, Cfg: cfg, Env: c.env, Tasks: c.HeldOutTasks, Tok: c.Tok, N: HeldOutEpisodes, Seed: HeldOutSeed}
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
