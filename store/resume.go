package store

// Resuming interrupted computations. The long computations that the store runs (the base agent, a training run) save
// their state in the result store while they run: every Store.CheckpointEvery of wall time, and when the process
// receives an interrupt (Jupyter's "interrupt the kernel" sends SIGINT to the cell's program). Run again, the
// same computation finds that state under its key and goes on from it. The state is everything the remaining
// steps read (the model with its optimizer moments and step count, the run generator's state, the history and
// episode log so far), so a resumed run is bit-identical to one that was never interrupted.
//
// An interrupt saves at once the state after the last step that ended, which the run encodes after every step (a
// few milliseconds) for this purpose. Then, if the step under way ends within StopWithin, the state at its end,
// after which the run stops; otherwise the run's caller returns without it (stop.go).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
)

// ErrInterrupted is wrapped by the error of a resumable computation that stopped on an interrupt after saving
// its progress.
var ErrInterrupted = errors.New("interrupted")

// DefaultCheckpointEvery is the wall time between two saves of a running computation's progress unless its
// store's CheckpointEvery says otherwise.
const DefaultCheckpointEvery = 30 * time.Second

// checkpointEvery is CheckpointEvery, or its default.
func (s *Store) checkpointEvery() time.Duration {
	if s.CheckpointEvery == 0 {
		return DefaultCheckpointEvery
	}
	return s.CheckpointEvery
}

// checkpoint is a resumable computation's state after Step steps, as the computation encodes it.
type checkpoint struct {
	Step  int
	State []byte
}

var checkpointCodec = Codec[*checkpoint]{
	Encode: func(w io.Writer, p *checkpoint) error {
		if err := binary.Write(w, binary.LittleEndian, [2]uint64{uint64(p.Step), uint64(len(p.State))}); err != nil {
			return err
		}
		_, err := w.Write(p.State)
		return err
	},
	Decode: func(r io.Reader) (*checkpoint, error) {
		var head [2]uint64
		if err := binary.Read(r, binary.LittleEndian, &head); err != nil {
			return nil, err
		}
		state, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		if uint64(len(state)) != head[1] {
			return nil, fmt.Errorf("state of %d bytes, want %d", len(state), head[1])
		}
		return &checkpoint{Step: int(head[0]), State: state}, nil
	},
}

// watchInterrupts catches the process's first SIGINT from now until stop is called, and calls onInterrupt (on a
// goroutine of its own); SIGINT then takes its default action again, so a second interrupt ends the process at
// once. stop waits for an onInterrupt under way. Tests replace it.
var watchInterrupts = func(onInterrupt func()) (stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-c:
			signal.Stop(c)
			onInterrupt()
		case <-done:
		}
	}()
	return func() {
		signal.Stop(c)
		close(done)
		<-finished // an onInterrupt under way ends first: nothing is saved after stop returns
	}
}

// Resume saves and restores the checkpoints of the computation stored under one key, and tells its store's
// observer. Resumable gives one to the computation it runs.
type Resume struct {
	store       *Store
	key         string // the checkpoint entry's key: the result's key + ".partial"
	record      string // the key of the record of the first step (a verified Resumable), or ""
	transient   bool   // nothing is restored or saved: the computation's code reads what no key can hold
	interrupted atomic.Bool
	abandoned   chan struct{} // closed (under mu) StopWithin after an interrupt: the caller has returned

	mu         sync.Mutex   // guards the fields below: an interrupt saves from a goroutine of its own
	steps      int          // the computation's number of steps, once told (StepDone, Progress); 0: not yet
	lastSave   time.Time    // when the last save began
	latest     bytes.Buffer // the encoded state after the last step that ended
	latestStep int          // the number of steps latest holds; 0: none yet
	savedStep  int          // the number of steps the entry in the store holds; 0: none saved by this process
}

// Resumable is Cached for a computation that saves its progress through r while it runs: every
// s.CheckpointEvery of wall time, and at once when the process is interrupted (see r.StepDone), so that, run
// again, it resumes from the saved state (r.Restore). The checkpoint is removed once the result is stored.
//
// Where k holds code from outside the packages on disk (k.Outside: a notebook cell's loop, environment or
// estimator), which may read when it runs what its key cannot show, every serve of a stored result, from this
// process's memory or from disk, and every resumption is verified first: first recomputes the computation's first
// step and returns a record of it, which must equal the record the computation kept of its own first step
// (r.FirstStep); on a mismatch, or without a record, one line says the stored result was computed otherwise and
// which part of the record differs, the result and its progress are removed, and it is computed again. first may
// be nil only where k.Outside is.
//
// Where that code reads what no key can hold (k.Open: a file, an environment variable, a variable written through
// another name), no step's record shows all it read (a file may matter from the second step on): nothing stored is
// served and nothing computed is stored, as Cached does for such a key; the computation runs to its end with its
// progress told, and an interrupt stops it without saving.
func Resumable[T any](s *Store, k codekey.Keyed, codec Codec[T], first func() ([]byte, error), compute func(r *Resume) (T, error)) (T, error) {
	if len(k.Open) > 0 {
		r := newResume(s, k.Key+".partial")
		r.transient = true
		return uncached(s, k, codec, func() (T, error) {
			defer watchInterrupts(r.interrupt)()
			return runStoppable(r, compute)
		}, k.Open)
	}
	if len(k.Outside) == 0 {
		return resumable(s, k, codec, compute)
	}
	if first == nil {
		var zero T
		return zero, fmt.Errorf("store: Resumable(%s): its key holds code from outside the packages on disk (%s), "+
			"so a stored result is verified by its first step: first is nil", k.Key, strings.Join(k.Outside, ", "))
	}
	return resumableVerified(s, k, codec, first, compute)
}

// resumable is Resumable without verification.
func resumable[T any](s *Store, k codekey.Keyed, codec Codec[T], compute func(r *Resume) (T, error)) (T, error) {
	key := k.Key
	r := newResume(s, key+".partial")
	v, err := cached(s, k, codec, func() (T, error) {
		r.lastSave = time.Now()
		defer watchInterrupts(r.interrupt)()
		s.tell(Event{Kind: Computing, Key: key})
		return runStoppable(r, compute)
	})
	if err == nil {
		if rmErr := s.Reset(r.key); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			s.tell(Event{Kind: RemoveFailed, Key: r.key, Err: rmErr})
		}
	}
	return v, err
}

// newResume is the Resume of the checkpoint entry key.
func newResume(s *Store, key string) *Resume {
	return &Resume{store: s, key: key, abandoned: make(chan struct{})}
}

// Restore returns the saved state and the number of steps it holds, or ok = false when there is none (or none
// usable: the computation then starts over).
func (r *Resume) Restore() (state []byte, steps int, ok bool) {
	if r.transient {
		return nil, 0, false
	}
	p, err := load(r.store, r.key, checkpointCodec)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			r.store.tell(Event{Kind: StartOver, Key: r.key, Err: err})
		}
		return nil, 0, false
	}
	r.store.tell(Event{Kind: Resuming, Key: r.key, Step: p.Step})
	r.mu.Lock()
	r.latestStep, r.savedStep = p.Step, p.Step // the store holds it: an interrupt now has nothing newer to save
	r.mu.Unlock()
	return p.State, p.Step, true
}

// Unusable reports that the state Restore returned cannot be decoded: the computation starts over.
func (r *Resume) Unusable(err error) {
	r.store.tell(Event{Kind: StartOver, Key: r.key, Err: err})
	r.mu.Lock()
	r.latestStep, r.savedStep = 0, 0
	r.mu.Unlock()
}

// StepDone is called after step (0-based) of steps. It encodes the state with encode, and saves it when
// the store's CheckpointEvery has passed since the last save or an interrupt has arrived; after an interrupt it
// returns an error wrapping ErrInterrupted. A save that fails is told (SaveFailed) and the computation goes on. Nothing is
// saved after the last step: the result itself is stored next.
func (r *Resume) StepDone(step, steps int, encode func(w io.Writer) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = steps
	switch {
	case r.gaveUp():
		return fmt.Errorf("%w: step %d of %d ended after its caller returned; nothing saved", ErrInterrupted,
			step+1, steps)
	case r.transient && r.interrupted.Load():
		return fmt.Errorf("%w after step %d of %d; nothing saved: its code reads what no key can hold", ErrInterrupted,
			step+1, steps)
	case step+1 == steps || r.transient:
		return nil
	}
	r.latest.Reset()
	var state bytes.Buffer
	if err := encode(&state); err != nil {
		r.latestStep = 0
		return fmt.Errorf("cache: encode %s: %w", r.key, err)
	}
	if err := checkpointCodec.Encode(&r.latest, &checkpoint{Step: step + 1, State: state.Bytes()}); err != nil {
		r.latestStep = 0
		return fmt.Errorf("cache: encode %s: %w", r.key, err)
	}
	r.latestStep = step + 1
	interrupted := r.interrupted.Load()
	if !interrupted && time.Since(r.lastSave) < r.store.checkpointEvery() {
		return nil
	}
	if err := r.saveLatest(); err != nil {
		if interrupted {
			return fmt.Errorf("%w after step %d of %d; its progress could not be saved: %w", ErrInterrupted,
				step+1, steps, err)
		}
		r.store.tell(Event{Kind: SaveFailed, Key: r.key, Step: step + 1, Err: err})
		return nil
	}
	if interrupted {
		return fmt.Errorf("%w after step %d of %d; progress saved as %s: run it again to resume", ErrInterrupted,
			step+1, steps, r.key)
	}
	return nil
}

// interrupt records an interrupt and saves, at once, the state after the last step that ended, so that it
// survives the program being killed before the current step ends. It runs on a goroutine of its own.
func (r *Resume) interrupt() {
	r.interrupted.Store(true)
	time.AfterFunc(stopWithin, r.abandon)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.latestStep == 0 || r.transient {
		r.store.tell(Event{Kind: Interrupted, Key: r.key})
		return
	}
	err := r.saveLatest()
	r.store.tell(Event{Kind: Interrupted, Key: r.key, Step: r.latestStep, Err: err})
}

// saveLatest writes latest to the store unless the store already holds it. r.mu is held.
func (r *Resume) saveLatest() error {
	if r.latestStep == r.savedStep {
		return nil
	}
	r.lastSave = time.Now()
	if err := r.store.save(r.key, r.latest.Bytes()); err != nil {
		return err
	}
	r.savedStep = r.latestStep
	return nil
}

// Progress starts the progress of the computation's steps steps, the first of which this process runs is first (a
// resumed computation's), told with the result's key.
func (r *Resume) Progress(name string, steps, first int) *Progress {
	r.mu.Lock()
	r.steps = steps
	r.mu.Unlock()
	s := r.store
	return newProgress(s.tell, s.progressEvery(), strings.TrimSuffix(r.key, ".partial"), name, steps).ResumeAt(first)
}
