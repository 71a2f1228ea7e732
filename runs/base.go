package runs

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/store"
)

// BaseKey is the key under which Base stores b's base agent.
func BaseKey(b agentrl.BaseRun) (string, error) { return codekey.Key("rl_base", b) }

// errFirstStepDone stops a base agent's training after its first step (baseFirstStep).
var errFirstStepDone = errors.New("first step done")

// baseFirstStep trains b's first step and returns its record (stepRecord).
func baseFirstStep(b agentrl.BaseRun) ([]byte, error) {
	src := agentrl.NewSource(b.Seed())
	var record []byte
	_, err := b.Train(nil, rand.New(src), 0, func(step int, m *gomlxmodel.Model, _ float64) error {
		var err error
		if record, err = stepRecord(&agentrl.Run{Policy: m}, src); err != nil {
			return err
		}
		return errFirstStepDone
	})
	if !errors.Is(err, errFirstStepDone) {
		if err == nil {
			err = errors.New("runs: the base agent's training has no step")
		}
		return nil, err
	}
	return record, nil
}

// Base returns the base agent that b trains: loaded from s, resumed from the progress s holds, or trained. Its key
// is b's value (the recipe, the tasks, the tokenizer, the environment with its arguments). It is checked before
// anything is loaded or trained, resumable as Train's runs are, and verified as they are where its environment is
// code from outside the library.
func Base(s *store.Store, b agentrl.BaseRun) (*gomlxmodel.Model, error) {
	if s == nil {
		return nil, errors.New("runs: Base: the store is nil: open one with store.Default or store.Open")
	}
	if err := b.Check(); err != nil {
		return nil, err
	}
	k, err := codekey.KeyOf("rl_base", b)
	if err != nil {
		return nil, fmt.Errorf("runs: Base: %w", err)
	}
	compute := func(r *store.Resume) (*gomlxmodel.Model, error) {
		var model *gomlxmodel.Model
		src, first := agentrl.NewSource(b.Seed()), 0
		if state, step, ok := r.Restore(); ok {
			run, saved, err := decodeState(b.Engine, state)
			if err != nil {
				r.Unusable(err)
			} else {
				model, src, first = run.Policy, saved, step
			}
		}
		prog := r.Progress("base agent", b.Config.Steps, first)
		return b.Train(model, rand.New(src), first, func(step int, m *gomlxmodel.Model, loss float64) error {
			prog.Done(step, fmt.Sprintf("cross-entropy %.3f", loss))
			if step == 0 {
				record, err := stepRecord(&agentrl.Run{Policy: m}, src)
				if err != nil {
					return err
				}
				r.FirstStep(record)
			}
			return r.StepDone(step, b.Config.Steps, func(w io.Writer) error {
				return encodeState(w, &agentrl.Run{Policy: m}, src)
			})
		})
	}
	first := func() ([]byte, error) { return baseFirstStep(b) }
	return store.Resumable(s, k, ModelCodec(b.Engine), first, compute)
}

// ModelCodec stores a TinyAgent (weights and optimizer state); it loads them computing on eng.
func ModelCodec(eng *gomlxmodel.Engine) store.Codec[*gomlxmodel.Model] {
	return store.Codec[*gomlxmodel.Model]{Encode: func(w io.Writer, m *gomlxmodel.Model) error {
		_, err := m.WriteTo(w)
		return err
	}, Decode: func(r io.Reader) (*gomlxmodel.Model, error) { return gomlxmodel.ReadModel(eng, r) }}
}

// CriticCodec stores a critic; it loads it computing on eng.
func CriticCodec(eng *gomlxmodel.Engine) store.Codec[*gomlxmodel.Critic] {
	return store.Codec[*gomlxmodel.Critic]{Encode: func(w io.Writer, c *gomlxmodel.Critic) error {
		_, err := c.WriteTo(w)
		return err
	}, Decode: func(r io.Reader) (*gomlxmodel.Critic, error) { return gomlxmodel.ReadCritic(eng, r) }}
}

// RunCodec stores a training run (agentrl.WriteRun); it loads it computing on eng.
func RunCodec(eng *gomlxmodel.Engine) store.Codec[*agentrl.Run] {
	return store.Codec[*agentrl.Run]{Encode: agentrl.WriteRun,
		Decode: func(r io.Reader) (*agentrl.Run, error) { return agentrl.ReadRun(eng, r) }}
}
