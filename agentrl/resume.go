package agentrl

// Resuming interrupted runs. The long computations that the library caches (the base agent, TrainedRun) save
// their state in the result store while they run: every Store.CheckpointEvery of wall time, and when the process
// receives an interrupt (Jupyter's "interrupt the kernel" sends SIGINT to the cell's program). Run again, the
// same computation finds that state under its key and goes on from it. The state is everything the remaining
// steps read (the model with its optimizer moments and step count, the run generator's state, the history and
// episode log so far), so a resumed run is bit-identical to one that was never interrupted.
//
// An interrupt saves twice. At once, the state after the last step that ended, which the run encodes after every
// step (a few milliseconds) for this purpose: GoNB kills a cell's program 5 seconds after forwarding the
// interrupt, and a step can take longer than that (a first step that compiles its graphs, a slow machine). Then,
// if the program is still alive, the state at the end of the current step, after which the run stops.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"
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

// checkpoint is a resumable computation's state after Step steps.
type checkpoint struct {
	Step int
	RNG  []byte // the run generator's state (rand.PCG's binary form)
	Run  *Run   // the run so far; for the base agent, its model only
}

var checkpointCodec = Codec[*checkpoint]{
	Encode: func(w io.Writer, p *checkpoint) error {
		if err := binary.Write(w, binary.LittleEndian, [2]uint64{uint64(p.Step), uint64(len(p.RNG))}); err != nil {
			return err
		}
		if _, err := w.Write(p.RNG); err != nil {
			return err
		}
		return writeRun(w, p.Run)
	},
	Decode: func(r io.Reader) (*checkpoint, error) {
		var head [2]uint64
		if err := binary.Read(r, binary.LittleEndian, &head); err != nil {
			return nil, err
		}
		if head[1] > 1<<10 {
			return nil, fmt.Errorf("generator state of %d bytes", head[1])
		}
		p := &checkpoint{Step: int(head[0]), RNG: make([]byte, head[1])}
		if _, err := io.ReadFull(r, p.RNG); err != nil {
			return nil, err
		}
		var err error
		p.Run, err = readRun(r)
		return p, err
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

// resumer saves and restores the checkpoints of the computation cached under one key, and reports on its store's
// Notices. A nil *resumer does nothing: the public training loops run without one.
type resumer struct {
	store       *Store
	key         string // the checkpoint entry's key: the result's key + ".partial"
	interrupted atomic.Bool

	mu         sync.Mutex   // guards the fields below: an interrupt saves from a goroutine of its own
	lastSave   time.Time    // when the last save began
	latest     bytes.Buffer // the encoded state after the last step that ended
	latestStep int          // the number of steps latest holds; 0: none yet
	savedStep  int          // the number of steps the entry in the store holds; 0: none saved by this process
}

// cachedResumable is Cached for a computation that saves its progress through a resumer. The checkpoint is
// removed once the result is stored.
func cachedResumable[T any](s *Store, key string, codec Codec[T], compute func(*resumer) (T, error)) (T, error) {
	r := &resumer{store: s, key: key + ".partial"}
	v, err := Cached(s, key, codec, func() (T, error) {
		r.lastSave = time.Now()
		defer watchInterrupts(r.interrupt)()
		s.notef("cache: computing %s (an interrupt saves its progress for the next run)\n", key)
		return compute(r)
	})
	if err == nil {
		if rmErr := s.Reset(r.key); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			s.notef("cache: could not remove %s: %v\n", r.key, rmErr)
		}
	}
	return v, err
}

// restore returns the saved checkpoint and its generator, or nil when there is none (or none usable: the
// computation then starts over).
func (r *resumer) restore() (*checkpoint, *rand.PCG) {
	if r == nil {
		return nil, nil
	}
	p, err := load(r.store, r.key, checkpointCodec)
	var src *rand.PCG
	if err == nil {
		src = new(rand.PCG)
		err = src.UnmarshalBinary(p.RNG)
	}
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			r.store.notef("cache: %s unusable (%v): starting over\n", r.key, err)
		}
		return nil, nil
	}
	r.store.notef("cache: resuming %s after step %d\n", r.key, p.Step)
	r.mu.Lock()
	r.latestStep, r.savedStep = p.Step, p.Step // the store holds it: an interrupt now has nothing newer to save
	r.mu.Unlock()
	return p, src
}

// stepDone is called after step (0-based) of steps. It encodes the state that state returns, and saves it when
// the store's CheckpointEvery has passed since the last save or an interrupt has arrived; after an interrupt it
// returns an error wrapping ErrInterrupted. A save that fails is logged and the computation goes on. Nothing is
// saved after the last step: the result itself is stored next.
func (r *resumer) stepDone(step, steps int, state func() *checkpoint) error {
	if r == nil || step+1 == steps {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest.Reset()
	if err := checkpointCodec.Encode(&r.latest, state()); err != nil {
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
		r.store.notef("cache: could not save progress after step %d: %v\n", step+1, err)
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
func (r *resumer) interrupt() {
	r.interrupted.Store(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.latestStep == 0 {
		r.store.notef("cache: interrupt: stopping at the end of the current step (the first: nothing to save yet)\n")
		return
	}
	if err := r.saveLatest(); err != nil {
		r.store.notef("cache: interrupt: could not save progress after step %d: %v\n", r.latestStep, err)
		return
	}
	r.store.notef("cache: interrupt: progress after step %d saved; stopping at the end of the current step\n",
		r.latestStep)
}

// saveLatest writes latest to the store unless the store already holds it. r.mu is held.
func (r *resumer) saveLatest() error {
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

// progress starts the progress of the computation's n steps: on the store's Notices, or on os.Stderr (NewProgress)
// for a nil *resumer.
func (r *resumer) progress(name string, n int) *Progress {
	if r == nil {
		return NewProgress(name, n)
	}
	return r.store.NewProgress(name, n)
}

// Loop is a training loop of the caller's own that ResumableRun runs, stores and resumes: Steps calls of Step on
// the run that Start makes, drawing from one generator seeded with Seed.
type Loop struct {
	Name  string // the progress line's label
	Steps int
	Seed  uint64
	// Start makes the run before its first step: its Policy (required) and, if the loop trains one, its Critic.
	// It is not called when the run resumes.
	Start func() (*Run, error)
	// Step runs step step on run, drawing only from rng, and appends what it records to run.History (and Log,
	// Metrics). Everything it reads between steps must be in run: that is what an interrupt saves.
	Step func(run *Run, step int, rng *rand.Rand) error
}

// ResumableRun returns the run that loop computes, stored under key (made with Key) followed by the code of
// loop.Start and loop.Step (FuncCode): it loads the stored run, or resumes the loop's saved progress, or runs it
// from Start. While it runs, its progress is saved as TrainedRun's is (every store.CheckpointEvery, and on an
// interrupt, after which it returns an error wrapping ErrInterrupted), so a resumed loop gives the run an
// uninterrupted one gives, bit for bit. Every argument is checked before anything is keyed, loaded or printed.
func ResumableRun(store *Store, key string, loop Loop) (*Run, error) {
	var errs []error
	switch {
	case store == nil:
		errs = append(errs, errors.New("the store is nil: open one with DefaultStore or OpenStore"))
	case key == "":
		errs = append(errs, errors.New("the key is empty: make one with Key"))
	}
	if loop.Steps < 1 {
		errs = append(errs, fmt.Errorf("Loop.Steps = %d, want >= 1", loop.Steps))
	}
	if loop.Start == nil {
		errs = append(errs, errors.New("Loop.Start is nil: pass the function that makes the run before its first step"))
	}
	if loop.Step == nil {
		errs = append(errs, errors.New("Loop.Step is nil: pass the function that runs one step"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("agentrl: ResumableRun: %w", err)
	}
	for _, f := range []any{loop.Start, loop.Step} {
		code, err := FuncCode(f)
		if err != nil {
			return nil, fmt.Errorf("agentrl: ResumableRun(%s): %w", key, err)
		}
		if code != "" {
			key += "-" + code
		}
	}
	name := loop.Name
	if name == "" {
		name = "loop"
	}
	return cachedResumable(store, key, RunCodec(), func(res *resumer) (*Run, error) {
		var run *Run
		src := newPCG(loop.Seed)
		first := 0
		if p, saved := res.restore(); p != nil {
			run, src, first = p.Run, saved, p.Step
		} else {
			var err error
			if run, err = loop.Start(); err != nil {
				return nil, err
			}
			if run == nil || run.Policy == nil {
				return nil, fmt.Errorf("agentrl: ResumableRun(%s): Loop.Start returned no policy: a run needs one", key)
			}
		}
		rng := rand.New(src)
		prog := store.NewProgress(name, loop.Steps).resumeAt(first)
		for step := first; step < loop.Steps; step++ {
			n := len(run.History)
			if err := loop.Step(run, step, rng); err != nil {
				return nil, fmt.Errorf("%s step %d: %w", name, step, err)
			}
			note := ""
			if len(run.History) > n {
				s := run.History[len(run.History)-1]
				note = fmt.Sprintf("pass %.2f reward %+.2f turns %.2f", s.PassRate, s.Reward, s.Turns)
			}
			prog.Done(step, note)
			if err := res.stepDone(step, loop.Steps, func() *checkpoint {
				return &checkpoint{Step: step + 1, RNG: pcgState(src), Run: run}
			}); err != nil {
				return run, fmt.Errorf("%s: %w", name, err)
			}
		}
		return run, nil
	})
}
