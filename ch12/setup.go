package ch12

import (
	"encoding/gob"
	"errors"
	"io"
	"sync"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// HeldOutEpisodes is the number of episodes per held-out task of HeldOut, the book's held_out.
const HeldOutEpisodes = 16

// HeldOutSeed seeds HeldOut's generator.
const HeldOutSeed = 7

// Chapter is what every section of the chapter starts from.
type Chapter struct {
	Tok          *agentrl.Tokenizer // over every task (training and held-out)
	Train        []agentrl.Task     // the 20 training tasks
	HeldOutTasks []agentrl.Task     // the 10 held-out tasks
	Store        *agentrl.Store     // the result store ($AGENTRL_CACHE, else the user's cache directory)

	base func() (*gomlxmodel.Model, error)
}

// Setup builds the chapter's tokenizer and tasks and opens the default result store. It trains and loads nothing:
// the base agent is made on the first call of Base. In a GoNB cell program it also makes the Status display the
// destination of the store's notices and progress lines (its Notices), redrawn every NotebookProgressInterval.
func Setup() (*Chapter, error) { return SetupWith(agentrl.DefaultBaseConfig()) }

// SetupWith is Setup with base as the recipe of the RL base agent (another draw, other demonstrations), which Base
// then makes or loads; every run of the chapter starts from it.
func SetupWith(base agentrl.BaseConfig) (*Chapter, error) {
	store, err := agentrl.DefaultStore()
	if err != nil {
		return nil, err
	}
	return SetupIn(store, base)
}

// SetupIn is SetupWith on store instead of the default result store (a command's temporary store, for one).
func SetupIn(store *agentrl.Store, base agentrl.BaseConfig) (*Chapter, error) {
	if store == nil {
		return nil, errors.New("ch12: SetupIn: the store is nil: open one with agentrl.OpenStore")
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
	installStatus(store)
	c := &Chapter{Tok: agentrl.BuildTokenizer(all), Train: train, HeldOutTasks: heldOut, Store: store}
	return c.WithBase(base)
}

// WithBase returns the chapter with base as the recipe of its RL base agent: the same tokenizer, tasks and store,
// and runs that start from that agent, made or loaded on the first call of Base.
func (c *Chapter) WithBase(base agentrl.BaseConfig) (*Chapter, error) {
	if err := base.Validate(); err != nil {
		return nil, err
	}
	with := &Chapter{Tok: c.Tok, Train: c.Train, HeldOutTasks: c.HeldOutTasks, Store: c.Store}
	with.base = sync.OnceValues(func() (*gomlxmodel.Model, error) {
		return agentrl.BaseFrom(with.Store, with.Tok, base)
	})
	return with, nil
}

// Base is the RL base agent (arl.make_rl_base), trained with agentrl.DefaultBaseConfig (SetupWith's recipe) on the
// training tasks or loaded from the store, once per process. Callers that train must copy it, as agentrl's loops do.
func (c *Chapter) Base() (*gomlxmodel.Model, error) { return c.base() }

// HeldOut is the book's held_out: behavior statistics of policy on the held-out tasks in cfg's environment,
// HeldOutEpisodes episodes per task sampled with generator seed HeldOutSeed. It is stored like a training run,
// keyed by the policy's fingerprint and everything else the evaluation reads, so a chapter executed again loads it
// instead of compiling and sampling again.
func (c *Chapter) HeldOut(policy *gomlxmodel.Model, cfg agentrl.RLConfig) (agentrl.Stats, error) {
	if err := cfg.Validate(); err != nil {
		return agentrl.Stats{}, err
	}
	id, err := agentrl.Fingerprint(policy)
	if err != nil {
		return agentrl.Stats{}, err
	}
	key := agentrl.Key("held_out", id, cfg, c.HeldOutTasks, c.Tok.Itos, HeldOutEpisodes, HeldOutSeed)
	return agentrl.Cached(c.Store, key, statsCodec, func() (agentrl.Stats, error) {
		return agentrl.Evaluate(policy, c.HeldOutTasks, c.Tok, HeldOutEpisodes, agentrl.NewRNG(HeldOutSeed), cfg, nil)
	})
}

// statsCodec stores behavior statistics (gob writes float64s exactly).
var statsCodec = agentrl.Codec[agentrl.Stats]{
	Encode: func(w io.Writer, s agentrl.Stats) error { return gob.NewEncoder(w).Encode(s) },
	Decode: func(r io.Reader) (agentrl.Stats, error) {
		var s agentrl.Stats
		err := gob.NewDecoder(r).Decode(&s)
		return s, err
	},
}

// Must returns v, or panics with err: a cell's way to stop with an error's message.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Check panics with err unless it is nil: a cell's way to stop on an error of a call that returns only an error.
func Check(err error) {
	if err != nil {
		panic(err)
	}
}
