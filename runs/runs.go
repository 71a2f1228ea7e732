// Package runs stores the chapter's training runs and base agents: it computes a run given as a value
// (agentrl.Loop, agentrl.BaseRun) once, under the key of that value (codekey.KeyOf), saves its progress while it
// trains and resumes it after an interrupt, and loads it every other time. Its key holds this package's code and
// everything it imports, as every key holds the code of the package that makes it.
package runs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/store"
)

// checker is a Loop that can say, before anything runs, why it cannot (agentrl.GRPO.Check).
type checker interface{ Check() error }

// Key is the key under which Train stores loop's run from base with inputs.
func Key(base *gomlxmodel.Model, loop agentrl.Loop, inputs ...any) (string, error) {
	k, err := codekey.KeyOf("train/"+Name(loop), base, loop, inputs)
	return k.Key, err
}

// Check returns an error, naming what to change, when Train would refuse loop whatever its base: a nil loop, no
// steps, what the loop's own Check method says, or a value the key cannot read (codekey.Of). A caller that must
// make or load the base agent first checks the loop before it.
func Check(loop agentrl.Loop) error {
	if loop == nil {
		return errors.New("runs: the loop is nil")
	}
	if steps, _ := loop.Plan(); steps < 1 {
		return fmt.Errorf("runs: %s has %d steps, want >= 1", Name(loop), steps)
	}
	if c, ok := loop.(checker); ok {
		if err := c.Check(); err != nil {
			return err
		}
	}
	if _, err := codekey.Of(loop); err != nil {
		return fmt.Errorf("runs: %w", err)
	}
	return nil
}

// Name is the loop's name in keys and progress lines: its type's name, in lower case.
func Name(loop agentrl.Loop) string {
	t := reflect.TypeOf(loop)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Name() == "" {
		return "loop"
	}
	return strings.ToLower(t.Name())
}

// Train returns the run that loop trains from base: loaded from s when it is there, resumed from the progress s
// holds, or trained from loop.Start. Everything that determines the run is in its key by construction: base's
// weights and optimizer state, and loop's value and code (codekey.Of, which refuses a loop it cannot read, such
// as one holding a function literal that captures variables, before anything runs), and inputs: values that loop's
// code reads from its surroundings rather than its fields (the chapter's tasks for a loop written in a cell). A loop with a Check method is
// checked first, as is everything else, before anything is loaded, trained or printed. While it trains, its
// progress is saved every s.CheckpointEvery and at once on an interrupt, after which Train returns an error
// wrapping store.ErrInterrupted; run again, it resumes bit-identically. Where the key holds code from outside the
// packages on disk (a cell's loop, environment, estimator, metric), which may read at run time what its code does
// not show, the store verifies a stored run at every serve (store.Resumable): it runs the first step again and
// compares the state after it, and computes the run again, saying so, where they differ.
func Train(s *store.Store, base *gomlxmodel.Model, loop agentrl.Loop, inputs ...any) (*agentrl.Run, error) {
	switch {
	case s == nil:
		return nil, errors.New("runs: Train: the store is nil: open one with store.Default or store.Open")
	case base == nil:
		return nil, errors.New("runs: Train: the base model is nil: pass the agent to train")
	}
	if err := Check(loop); err != nil {
		return nil, err
	}
	k, err := codekey.KeyOf("train/"+Name(loop), base, loop, inputs)
	if err != nil {
		return nil, fmt.Errorf("runs: Train: %w", err)
	}
	first := func() ([]byte, error) { return firstStep(base, loop) }
	return store.Resumable(s, k, RunCodec(base.Engine()), first, func(r *store.Resume) (*agentrl.Run, error) {
		return train(r, base, loop)
	})
}

// firstStep runs loop's first step from base and returns its record (stepRecord).
func firstStep(base *gomlxmodel.Model, loop agentrl.Loop) ([]byte, error) {
	_, seed := loop.Plan()
	src := agentrl.NewSource(seed)
	run, err := loop.Start(base)
	if err != nil {
		return nil, err
	}
	if run == nil || run.Policy == nil {
		return nil, fmt.Errorf("runs: %s's Start returned no policy: a run needs one", Name(loop))
	}
	run.Base = base
	if err := loop.Step(run, 0, rand.New(src)); err != nil {
		return nil, fmt.Errorf("%s: step 0: %w", Name(loop), err)
	}
	return stepRecord(run, src)
}

// train runs loop from base, or from the state r restores.
func train(r *store.Resume, base *gomlxmodel.Model, loop agentrl.Loop) (*agentrl.Run, error) {
	steps, seed := loop.Plan()
	run, src, first := (*agentrl.Run)(nil), agentrl.NewSource(seed), 0
	if state, step, ok := r.Restore(); ok {
		var err error
		if run, src, err = decodeState(base.Engine(), state); err != nil {
			r.Unusable(err)
			run, src = nil, agentrl.NewSource(seed)
		} else {
			first = step
		}
	}
	if run == nil {
		var err error
		if run, err = loop.Start(base); err != nil {
			return nil, err
		}
		if run == nil || run.Policy == nil {
			return nil, fmt.Errorf("runs: %s's Start returned no policy: a run needs one", Name(loop))
		}
	}
	run.Base = base
	name := Name(loop)
	prog := r.Progress(name, steps, first)
	err := agentrl.Train(loop, run, rand.New(src), first, func(step int) error {
		note := ""
		if n := len(run.History); n > 0 {
			s := run.History[n-1]
			note = fmt.Sprintf("pass %.2f reward %+.2f turns %.2f", s.PassRate, s.Reward, s.Turns)
		}
		prog.Done(step, note)
		if step == 0 {
			record, err := stepRecord(run, src)
			if err != nil {
				return err
			}
			r.FirstStep(record)
		}
		return r.StepDone(step, steps, func(w io.Writer) error { return encodeState(w, run, src) })
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return run, nil
}

// encodeState writes a run's state between steps: its generator's state, then the run.
func encodeState(w io.Writer, run *agentrl.Run, src *rand.PCG) error {
	rng, err := src.MarshalBinary()
	if err != nil {
		return err
	}
	if err := binary.Write(w, binary.LittleEndian, uint64(len(rng))); err != nil {
		return err
	}
	if _, err := w.Write(rng); err != nil {
		return err
	}
	return agentrl.WriteRun(w, run)
}

// decodeState reads what encodeState wrote, the run's models computing on eng.
func decodeState(eng *gomlxmodel.Engine, state []byte) (*agentrl.Run, *rand.PCG, error) {
	if len(state) < 8 {
		return nil, nil, errors.New("truncated state")
	}
	n := binary.LittleEndian.Uint64(state)
	if n > 1<<10 || n > uint64(len(state)-8) {
		return nil, nil, fmt.Errorf("generator state of %d bytes", n)
	}
	src := new(rand.PCG)
	if err := src.UnmarshalBinary(state[8 : 8+n]); err != nil {
		return nil, nil, err
	}
	run, err := agentrl.ReadRun(eng, bytes.NewReader(state[8+n:]))
	return run, src, err
}
