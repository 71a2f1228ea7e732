package store

// Stopping on time. GoNB kills a cell's program 5 seconds after forwarding an interrupt, and a step can take longer
// than that (a step that compiles new graphs, a slow or busy machine): a run that waited for its step to end would
// then die with "signal: killed" and no word of what it saved. So a resumable computation runs on a goroutine of its
// own, and StopWithin after an interrupt its caller stops waiting for the step under way: it returns the interrupted
// error, which says what the store holds, while the abandoned step ends (or the program does) unseen and saves nothing.

import (
	"fmt"
	"time"
)

// StopWithin is the longest a resumable computation's caller waits, after an interrupt, for the step under way to end.
const StopWithin = 3 * time.Second

// stopWithin is StopWithin; tests shorten it.
var stopWithin = StopWithin

// runStoppable runs compute(r) on a goroutine of its own and returns what it returns, or, once r is abandoned
// (stopWithin after an interrupt, while its step is still under way), r's interrupted error at once. A panic of
// compute is raised again in the caller.
func runStoppable[T any](r *Resume, compute func(r *Resume) (T, error)) (T, error) {
	type outcome struct {
		v        T
		err      error
		returned bool
		panicked any
	}
	done := make(chan outcome, 1) // the abandoned goroutine's send never blocks
	go func() {
		var o outcome
		defer func() {
			if !o.returned {
				o.panicked = recover()
			}
			done <- o
		}()
		o.v, o.err = compute(r)
		o.returned = true
	}()
	select {
	case o := <-done:
		if !o.returned {
			if o.panicked == nil {
				o.panicked = fmt.Sprintf("store: the computation of %s exited its goroutine (runtime.Goexit)", r.key)
			}
			panic(o.panicked)
		}
		return o.v, o.err
	case <-r.abandoned:
		var zero T
		return zero, r.abandonedErr()
	}
}

// abandon gives up waiting for the step under way: from now on StepDone saves nothing, and the caller of the
// computation returns. It runs stopWithin after the interrupt, on a timer's goroutine.
func (r *Resume) abandon() {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.abandoned)
}

// gaveUp reports whether r is abandoned. r.mu is held.
func (r *Resume) gaveUp() bool {
	select {
	case <-r.abandoned:
		return true
	default:
		return false
	}
}

// abandonedErr says what an abandoned computation leaves in the store. r.abandon has run.
func (r *Resume) abandonedErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	of := ""
	if r.steps > 0 {
		of = fmt.Sprintf(" of %d", r.steps)
	}
	switch {
	case r.transient:
		return fmt.Errorf("%w during step %d%s; nothing saved: its code reads what no key can hold", ErrInterrupted,
			r.latestStep+1, of)
	case r.savedStep == 0:
		return fmt.Errorf("%w during step %d%s, which did not end within %s of the interrupt; nothing saved yet",
			ErrInterrupted, r.latestStep+1, of, stopWithin)
	}
	return fmt.Errorf("%w after step %d%s; progress saved as %s: run it again to resume", ErrInterrupted,
		r.savedStep, of, r.key)
}
