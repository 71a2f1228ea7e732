package agentrl

import (
	"fmt"
	"math/rand/v2"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// A Loop is a training run given as a value: its fields are everything the run reads besides the model it starts
// from, so the value names the run (a stored run is found again under the key of the same value). Train runs it
// step by step, which a caller can wrap from outside (progress, checkpoints, interrupts) without touching its code.
type Loop interface {
	// Plan is the number of steps and the seed of the run's one generator.
	Plan() (steps int, seed uint64)
	// Start makes the run's state before its first step from base, which it must not modify (it copies it).
	Start(base *gomlxmodel.Model) (*Run, error)
	// Step runs step step on run, drawing only from rng, and appends what it records to run.History (and Log,
	// LogTask, Metrics). Everything it reads between steps must be in run: a run resumed from its state after a
	// step goes on as the uninterrupted one.
	Step(run *Run, step int, rng *rand.Rand) error
}

// Train runs steps first to steps-1 of l on run, drawing from rng, and calls after (when not nil) after each step:
// the plain loop that every training run of the chapter is. run.Base is the model the run started from.
func Train(l Loop, run *Run, rng *rand.Rand, first int, after func(step int) error) error {
	steps, _ := l.Plan()
	for step := first; step < steps; step++ {
		if err := l.Step(run, step, rng); err != nil {
			return fmt.Errorf("step %d: %w", step, err)
		}
		if after != nil {
			if err := after(step); err != nil {
				return err
			}
		}
	}
	return nil
}

// RunLoop trains l from base, from its first step to its last: Start, then Train with one generator seeded with
// l's seed.
func RunLoop(l Loop, base *gomlxmodel.Model) (*Run, error) {
	run, err := l.Start(base)
	if err != nil {
		return nil, err
	}
	run.Base = base
	_, seed := l.Plan()
	return run, Train(l, run, NewRNG(seed), 0, nil)
}
