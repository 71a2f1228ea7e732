package ch12

import (
	"errors"
	"fmt"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/store"
)

// An Option says how a chapter differs from the default one (Setup, Chapter.With).
type Option func(*options) error

// options are what a chapter's options set; nil and empty fields leave the chapter as it is.
type options struct {
	store  *store.Store
	engine *gomlxmodel.Engine
	recipe *agentrl.BaseConfig
	words  []string
	env    agentrl.EnvMaker
	from   *gomlxmodel.Model
}

// apply sets o from opts, in order, or returns the first option's error.
func (o *options) apply(opts []Option) error {
	for i, opt := range opts {
		if opt == nil {
			return fmt.Errorf("ch12: option %d is nil: leave it out", i)
		}
		if err := opt(o); err != nil {
			return fmt.Errorf("ch12: %w", err)
		}
	}
	return nil
}

// Recipe makes the chapter's RL base agent with base as its recipe (another draw, other demonstrations): Base then
// makes or loads that agent, and every run starts from it.
func Recipe(base agentrl.BaseConfig) Option {
	return func(o *options) error {
		o.recipe = &base
		return nil
	}
}

// Words adds words to the chapter's vocabulary (the words of an environment's own observations, which would
// otherwise be an error: agentrl.UnknownWordsError), and so gives it a base agent of its own for the larger
// vocabulary, trained with the same recipe (minutes, once) on the first call of Base. That agent knows the words
// but has never seen them in an observation: for an environment that shows them, add In too. Words the
// vocabulary has already change nothing.
func Words(words ...string) Option {
	return func(o *options) error {
		o.words = append(o.words, words...)
		return nil
	}
}

// In makes env the chapter's environment: its base agent is trained as the chapter's, with the chapter's recipe,
// tasks and tokenizer (Words' included), on demonstrations played in env's environments, so that it has seen their
// observations before RL starts; its runs train and HeldOut evaluates in env's environments. It is made once and
// stored, keyed by env's value and code and the tokenizer. A run in another environment from the chapter's base
// agent is a run option instead (agentrl.InEnv).
func In(env agentrl.EnvMaker) Option {
	return func(o *options) error {
		if env == nil {
			return errors.New("In(nil): pass an environment maker, or leave the option out for the chapter's own")
		}
		o.env = env
		return nil
	}
}

// From makes base the agent the chapter's runs start from (a policy trained otherwise), instead of its base agent.
func From(base *gomlxmodel.Model) Option {
	return func(o *options) error {
		if base == nil {
			return errors.New("From(nil): pass the agent the runs start from, or leave the option out")
		}
		o.from = base
		return nil
	}
}

// InStore is Setup's option of a store other than the default one (a command's temporary store, a test's).
func InStore(s *store.Store) Option {
	return func(o *options) error {
		if s == nil {
			return errors.New("InStore(nil): open a store with store.Open, or leave the option out for the default")
		}
		o.store = s
		return nil
	}
}

// OnEngine is Setup's option of an engine other than the one the program's environment describes.
func OnEngine(e *gomlxmodel.Engine) Option {
	return func(o *options) error {
		if e == nil {
			return errors.New("OnEngine(nil): make one with gomlxmodel.NewEngine, or leave the option out")
		}
		o.engine = e
		return nil
	}
}
