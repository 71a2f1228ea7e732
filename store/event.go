package store

import (
	"fmt"
	"strings"
	"time"
)

// Events. The store tells what it does with each result (loaded, computed, verified, not stored, waited for) and
// how the computations it runs progress as values, Events, to the observer it is given (Store.Observe), which shows
// them as it likes: ch12's status block counts the results loaded and verified and redraws a live line in place; a
// command writes each event as one line (Event.String) to its standard error, the default.

// Kind is what an Event tells.
type Kind int

// The kinds of events. Each names the fields it sets beside Kind and Key; Event.String gives its line.
const (
	// Loaded: Key's stored result was served. "cache: loaded KEY".
	Loaded Kind = iota + 1
	// Unusable: Key's stored result failed its checks (Err): it is computed again.
	Unusable
	// Waiting: another process computes Key; this one waits, then loads what that one stores.
	Waiting
	// LockFailed: Key's lock could not be taken (Err): it is computed without waiting for other processes.
	LockFailed
	// Computing: Key's computation starts. Without Reads, a resumable one (an interrupt saves its progress); with
	// Reads, one whose code reads what no key can hold (Reads), so that it is not stored. A computation that is
	// neither tells only Computed.
	Computing
	// Computed: Key was computed in Took and stored; with Reads, not stored (its code reads them); with Err, it
	// could not be stored (Err) and the next run computes it again.
	Computed
	// Resuming: a computation goes on from its progress (Key: the result's key + ".partial") after Step steps.
	Resuming
	// StartOver: a computation's progress (Key) is unusable (Err): the computation starts over.
	StartOver
	// SaveFailed: the progress after Step steps (Key) could not be saved (Err); the computation goes on.
	SaveFailed
	// Interrupted: the process was interrupted while it computed the progress Key; the progress after Step steps
	// is saved (Step 0: there is none yet; with Err: it could not be saved), and the computation stops at the end
	// of its current step, or its caller returns StopWithin after the interrupt.
	Interrupted
	// RemoveFailed: a computation's progress (Key) could not be removed once its result was stored (Err).
	RemoveFailed
	// Verifying: Key's stored result, or its progress, is verified by computing its first step again, as its key
	// cannot hold Why.
	Verifying
	// Verified: Key's stored result, or its progress, was found to have the recorded first step, in Took.
	Verified
	// Otherwise: Key's stored result was computed otherwise (its first step's record differs, Differs; its key
	// cannot hold Why): the result and its progress are removed and computed again.
	Otherwise
	// RecordFailed: the record of Key's first step could not be stored (Err): the next serve verifies again.
	RecordFailed
	// DescribeFailed: what Key's key holds could not be stored beside it (Err), for cmd/store to list.
	DescribeFailed
	// Progressed: Name's computation (Key's, when the store runs it; "" otherwise) finished Step of Steps steps,
	// Elapsed since it started in this process, with Remaining to go (an estimate), and its note on the step,
	// Detail.
	Progressed
)

// Event is one thing the store did with a result, or a step of a computation it runs. Kind says which and which
// fields it sets; the others are zero.
type Event struct {
	Kind Kind
	Key  string // the entry: a result's key, or its progress's (the result's key + ".partial")

	Took  time.Duration // Computed, Verified: how long the computation or the verification took
	Reads []string      // Computing, Computed: what the result's code reads that no key can hold: it is not stored
	Step  int           // Resuming, SaveFailed, Interrupted: the steps the progress holds; Progressed: the steps done
	Err   error         // Unusable, LockFailed, Computed, StartOver, SaveFailed, Interrupted, …Failed: what failed

	Why     string // Verifying, Otherwise: what the key cannot hold, for which the stored result is verified
	Differs string // Otherwise: which part of the record of the first step differs (RecordDiffers)

	Name               string        // Progressed: the computation's name ("base agent", "train_grpo")
	Steps              int           // Progressed: its steps
	Elapsed, Remaining time.Duration // Progressed: since it started in this process; the estimate of what is left
	Detail             string        // Progressed: the computation's note on its last step (a loss, a reward)
}

// String is the event's line, as a command shows it, without a newline: notices start with "cache:", progress
// with "progress:". Durations are rounded to the second (a verification's to the tenth of a second).
func (e Event) String() string {
	switch e.Kind {
	case Loaded:
		return "cache: loaded " + e.Key
	case Unusable:
		return fmt.Sprintf("cache: %s unusable (%v): recomputing", e.Key, e.Err)
	case Waiting:
		return fmt.Sprintf("cache: waiting for %s (another process is computing it)", e.Key)
	case LockFailed:
		return fmt.Sprintf("cache: cannot lock %s (%v): computing it without waiting for other processes", e.Key, e.Err)
	case Computing:
		if len(e.Reads) > 0 {
			return fmt.Sprintf("cache: computing %s (its code reads %s, which no key can hold: not stored)", e.Key,
				strings.Join(e.Reads, ", "))
		}
		return fmt.Sprintf("cache: computing %s (an interrupt saves its progress for the next run)", e.Key)
	case Computed:
		took := e.Took.Round(time.Second)
		switch {
		case len(e.Reads) > 0:
			return fmt.Sprintf("cache: computed %s in %s, not stored (its code reads %s)", e.Key, took,
				strings.Join(e.Reads, ", "))
		case e.Err != nil:
			return fmt.Sprintf("cache: computed %s in %s but could not store it: %v", e.Key, took, e.Err)
		}
		return fmt.Sprintf("cache: computed %s in %s", e.Key, took)
	case Resuming:
		return fmt.Sprintf("cache: resuming %s after step %d", e.Key, e.Step)
	case StartOver:
		return fmt.Sprintf("cache: %s unusable (%v): starting over", e.Key, e.Err)
	case SaveFailed:
		return fmt.Sprintf("cache: could not save progress after step %d: %v", e.Step, e.Err)
	case Interrupted:
		switch {
		case e.Step == 0:
			return fmt.Sprintf("cache: interrupt: stopping at the end of the current step or within %s (the first: "+
				"nothing to save yet)", StopWithin)
		case e.Err != nil:
			return fmt.Sprintf("cache: interrupt: could not save progress after step %d: %v", e.Step, e.Err)
		}
		return fmt.Sprintf("cache: interrupt: progress after step %d saved; stopping at the end of the current step "+
			"or within %s", e.Step, StopWithin)
	case RemoveFailed:
		return fmt.Sprintf("cache: could not remove %s: %v", e.Key, e.Err)
	case Verifying:
		return fmt.Sprintf("cache: verifying %s (its first step again: %s)", e.Key, e.Why)
	case Verified:
		return fmt.Sprintf("cache: verified %s in %s", e.Key, e.Took.Round(100*time.Millisecond))
	case Otherwise:
		return fmt.Sprintf("cache: %s: the stored run was computed otherwise (its first step differs: %s; the key "+
			"holds %s, not what it reads at run time): computing it again", e.Key, e.Differs, e.Why)
	case RecordFailed:
		return fmt.Sprintf("cache: could not store the record of %s's first step: %v", e.Key, e.Err)
	case DescribeFailed:
		return fmt.Sprintf("cache: could not describe %s: %v", e.Key, e.Err)
	case Progressed:
		return fmt.Sprintf("progress: %s step %d/%d | elapsed %s | remaining %s | %s", e.Name, e.Step, e.Steps,
			e.Elapsed.Round(time.Second), e.Remaining.Round(time.Second), e.Detail)
	}
	return fmt.Sprintf("cache: %s: event of kind %d", e.Key, int(e.Kind))
}

// tell gives e to the store's observer: Observe, or the default, which writes e's line to Notices (os.Stderr when
// nil), one event at a time.
func (s *Store) tell(e Event) {
	if s.Observe != nil {
		s.Observe(e)
		return
	}
	s.lines.Lock()
	defer s.lines.Unlock()
	fmt.Fprintln(s.notices(), e.String())
}
