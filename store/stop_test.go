package store

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
)

// fakeInterrupts replaces watchInterrupts for the test: the returned function interrupts the computation being
// watched, as a SIGINT would.
func fakeInterrupts(t *testing.T) (interrupt func()) {
	t.Helper()
	watch, within := watchInterrupts, stopWithin
	t.Cleanup(func() { watchInterrupts, stopWithin = watch, within })
	stopWithin = 200 * time.Millisecond
	handlers := make(chan func(), 1)
	watchInterrupts = func(onInterrupt func()) func() {
		handlers <- onInterrupt
		return func() {}
	}
	return func() { go (<-handlers)() }
}

// TestStopWithin checks that an interrupt during a step that does not end returns the interrupted error within
// stopWithin, saying what is saved; that the abandoned step saves nothing when it ends; and that the next call
// resumes from what the interrupt saved.
func TestStopWithin(t *testing.T) {
	tests := []struct {
		name      string
		doneFirst int // steps that end before the interrupt
		want      string
	}{
		{"during the first step", 0, "interrupted during step 1 of 5, which did not end within 200ms of the interrupt; nothing saved yet"},
		{"after two steps", 2, "interrupted after step 2 of 5; progress saved as k.partial: run it again to resume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustStore(t)
			log := captureNotices(s)
			interrupt := fakeInterrupts(t)
			release, lateErr := make(chan struct{}), make(chan error, 1)
			defer close(release)
			start := time.Now()
			_, err := Resumable(s, codekey.Keyed{Key: "k"}, intCodec, nil, func(r *Resume) (int, error) {
				r.Progress("counting", 5, 0)
				for step := range tt.doneFirst {
					if err := r.StepDone(step, 5, stepState(step)); err != nil {
						return 0, err
					}
				}
				interrupt()
				<-release // a step that outlasts stopWithin
				lateErr <- r.StepDone(tt.doneFirst, 5, stepState(tt.doneFirst))
				return 0, nil
			})
			if took := time.Since(start); took > 5*stopWithin {
				t.Errorf("the call returned %s after the interrupt, want about %s", took, stopWithin)
			}
			if !errors.Is(err, ErrInterrupted) || err.Error() != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			release <- struct{}{}
			if err := <-lateErr; !errors.Is(err, ErrInterrupted) {
				t.Errorf("the abandoned step's StepDone returned %v, want an interrupted error", err)
			}
			var resumedAt int
			fakeInterrupts(t)
			v, err := Resumable(s, codekey.Keyed{Key: "k"}, intCodec, nil, func(r *Resume) (int, error) {
				if state, steps, ok := r.Restore(); ok {
					resumedAt = steps
					if got, want := string(state), fmt.Sprint(steps); got != want {
						t.Errorf("restored state %q after %d steps", got, steps)
					}
				}
				return 42, nil
			})
			if err != nil || v != 42 {
				t.Fatalf("the next call: %d, %v", v, err)
			}
			if resumedAt != tt.doneFirst {
				t.Errorf("the next call resumed after step %d, want %d (what the interrupt saved; the abandoned step saved nothing)\n%s",
					resumedAt, tt.doneFirst, log)
			}
			if !strings.Contains(log.String(), "cache: interrupt: ") {
				t.Errorf("no interrupt notice:\n%s", log)
			}
		})
	}
}

// stepState encodes the state after step: its count of steps.
func stepState(step int) func(io.Writer) error {
	return func(w io.Writer) error { _, err := fmt.Fprint(w, step+1); return err }
}

// TestStopWithinPanics checks that a computation's panic reaches its caller.
func TestStopWithinPanics(t *testing.T) {
	s := mustStore(t)
	captureNotices(s)
	fakeInterrupts(t)
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want the computation's panic", p)
		}
	}()
	Resumable(s, codekey.Keyed{Key: "k"}, intCodec, nil, func(r *Resume) (int, error) { panic("boom") })
	t.Error("Resumable returned")
}
