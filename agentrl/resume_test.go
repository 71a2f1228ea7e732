package agentrl

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// interruptOnce makes the next resumable computation see an interrupt as soon as its first step ends, as if the
// user had interrupted the kernel during that step; later ones see none. The real hook comes back when the test
// ends.
func interruptOnce(t *testing.T) {
	t.Helper()
	watch := watchInterrupts
	t.Cleanup(func() { watchInterrupts = watch })
	fired := false
	watchInterrupts = func(onInterrupt func()) func() {
		if !fired {
			fired = true
			onInterrupt()
		}
		return func() {}
	}
}

// interruptDuring is factory for the next resumable computation, which receives an interrupt while factory
// makes its nth environment, in the middle of a step, and fails from then on, as a program that GoNB kills before
// that step ends.
func interruptDuring(t *testing.T, factory EnvFactory, n int) EnvFactory {
	t.Helper()
	watch := watchInterrupts
	t.Cleanup(func() { watchInterrupts = watch })
	var onInterrupt func()
	watchInterrupts = func(f func()) func() {
		onInterrupt = f
		return func() {}
	}
	failing, calls := failingFrom(factory, n), 0
	return func() (Env, error) {
		if calls++; calls == n {
			onInterrupt()
		}
		return failing()
	}
}

// failingFrom is factory, failing from its nth call on: a crash in the middle of a step.
func failingFrom(factory EnvFactory, n int) EnvFactory {
	calls := 0
	return func() (Env, error) {
		if calls++; calls >= n {
			return nil, errors.New("crash")
		}
		return factory()
	}
}

func encodeRun(t *testing.T, r *Run) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := RunCodec().Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func partialEntries(t *testing.T, s *Store) []string {
	t.Helper()
	entries, err := filepath.Glob(filepath.Join(s.Dir(), "*.partial.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestTrainedRunResumes stops a TrainedRun in several ways and runs it again: each time the result is
// bit-identical to the run that was never stopped (policy with its optimizer state, history, episode log), and
// the saved progress is gone once the result is stored.
func TestTrainedRunResumes(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 4, 3
	const steps, perStep = 4, 8 // environments made per step: PromptsPerStep × GroupSize
	env := EnvFactoryOf(cfg)

	var refSeen transcripts
	ref, err := TrainedRun(mustStore(t), base, tok, train, cfg, steps, "test", sameKey(refSeen.of(env)))
	if err != nil {
		t.Fatal(err)
	}
	want := encodeRun(t, ref)

	tests := []struct {
		name  string
		stop  func(t *testing.T) EnvFactory // prepares the stop; returns the factory of the stopped run
		every time.Duration                 // the store's CheckpointEvery (0: the default)
		// saved is the number of steps the stopped run saved (0: nothing to resume from).
		saved   int
		wantErr error
	}{
		{"interrupt", func(t *testing.T) EnvFactory { interruptOnce(t); return env }, 0, 1, ErrInterrupted},
		{"interrupt, then killed before the step ends", func(t *testing.T) EnvFactory {
			return interruptDuring(t, env, 2*perStep+1) // while sampling step 2: steps 0 and 1 are saved at once
		}, time.Hour, 2, nil},
		{"crash after periodic saves", func(t *testing.T) EnvFactory {
			return failingFrom(env, 2*perStep+1) // fails while sampling step 2
		}, everyStep, 2, nil},
		{"crash before any save", func(t *testing.T) EnvFactory {
			return failingFrom(env, 2*perStep+1)
		}, time.Hour, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := mustStore(t)
			store.CheckpointEvery = tc.every
			_, err := TrainedRun(store, base, tok, train, cfg, steps, "test", sameKey(tc.stop(t)))
			if err == nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("stopped run: error %v, want %v", err, tc.wantErr)
			}
			entries := partialEntries(t, store)
			if tc.saved == 0 {
				if len(entries) != 0 {
					t.Fatalf("progress saved: %v", entries)
				}
			} else {
				if len(entries) != 1 {
					t.Fatalf("progress entries %v, want one", entries)
				}
				key := filepath.Base(entries[0])
				p, err := load(store, key[:len(key)-len(".bin")], checkpointCodec)
				if err != nil || p.Step != tc.saved || len(p.Run.History) != tc.saved || len(p.Run.Log) != tc.saved*perStep {
					t.Fatalf("saved progress %+v (err %v), want %d steps", p, err, tc.saved)
				}
			}
			var seen transcripts
			got, err := TrainedRun(store, base, tok, train, cfg, steps, "test", sameKey(seen.of(env)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seen.texts(), refSeen.texts()[tc.saved*perStep:]) {
				t.Errorf("the run again did not replay the uninterrupted run's steps %d to %d (%d episodes, want %d)",
					tc.saved, steps-1, len(seen), (steps-tc.saved)*perStep)
			}
			if !bytes.Equal(encodeRun(t, got), want) {
				t.Fatal("resumed run differs from the uninterrupted one")
			}
			if entries := partialEntries(t, store); len(entries) != 0 {
				t.Fatalf("progress left after the result was stored: %v", entries)
			}
		})
	}
}

// TestCorruptProgressStartsOver checks that damaged progress is not trusted: the run starts over and still
// gives the uninterrupted result.
func TestCorruptProgressStartsOver(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 4, 3
	env := EnvFactoryOf(cfg)
	ref, err := TrainedRun(mustStore(t), base, tok, train, cfg, 3, "test", env)
	if err != nil {
		t.Fatal(err)
	}
	store := mustStore(t)
	interruptOnce(t)
	if _, err := TrainedRun(store, base, tok, train, cfg, 3, "test", env); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", err)
	}
	entries := partialEntries(t, store)
	if len(entries) != 1 {
		t.Fatalf("progress entries %v", entries)
	}
	data, err := os.ReadFile(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(entries[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	log := captureNotices(store)
	got, err := TrainedRun(store, base, tok, train, cfg, 3, "test", env)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encodeRun(t, got), encodeRun(t, ref)) {
		t.Fatal("run started over differs from the uninterrupted one")
	}
	if !bytes.Contains(log.Bytes(), []byte("unusable")) || bytes.Contains(log.Bytes(), []byte("resuming")) {
		t.Fatalf("log:\n%s", log.String())
	}
}

// TestBaseResumes interrupts the base agent's supervised training after its first step and trains it again.
func TestBaseResumes(t *testing.T) {
	tok, _ := testSetup(t)
	c := DefaultBaseConfig()
	c.Demos, c.MappingDemos, c.Steps, c.BatchSize = 32, 32, 3, 4
	ref, err := BaseFrom(mustStore(t), tok, c)
	if err != nil {
		t.Fatal(err)
	}
	store := mustStore(t)
	interruptOnce(t)
	if _, err := BaseFrom(store, tok, c); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", err)
	}
	got, err := BaseFrom(store, tok, c)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := fingerprintOf(t, got), fingerprintOf(t, ref); a != b {
		t.Fatalf("resumed base agent %s, uninterrupted %s", a, b)
	}
	if entries := partialEntries(t, store); len(entries) != 0 {
		t.Fatalf("progress left: %v", entries)
	}
}

// mustStore opens a store in a new temporary directory, as mustOpen does.
func mustStore(t *testing.T) *Store {
	t.Helper()
	return mustOpen(t, t.TempDir())
}

// everyStep is a CheckpointEvery that saves after every step: a step takes far longer.
const everyStep = time.Nanosecond

// TestUnsavedProgress checks that a checkpoint that cannot be written does not stop a computation, and that an
// interrupt then says that nothing was saved.
func TestUnsavedProgress(t *testing.T) {
	s := mustStore(t)
	if err := os.RemoveAll(s.Dir()); err != nil {
		t.Fatal(err)
	}
	s.CheckpointEvery = everyStep
	log := captureNotices(s)
	tok, _ := testSetup(t)
	policy := tinyPolicy(t, tok)
	state := func() *checkpoint { return &checkpoint{Step: 1, Run: &Run{Policy: policy}} }
	r := &resumer{store: s, key: "k.partial"}
	if err := r.stepDone(0, 3, state); err != nil {
		t.Fatalf("failed save: %v, want the computation to go on", err)
	}
	if !strings.Contains(log.String(), "could not save progress after step 1") {
		t.Errorf("log %q", log.String())
	}
	r.interrupted.Store(true)
	err := r.stepDone(1, 3, state)
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "could not be saved") {
		t.Fatalf("interrupted with a failed save: %v", err)
	}
}

// sameKey wraps f in a factory whose code, and so whose TrainedRun key, is the same whatever f is: the resume
// tests instrument the environments of the runs they compare differently.
func sameKey(f EnvFactory) EnvFactory { return func() (Env, error) { return f() } }

// TestTrainedRunRejects checks that TrainedRun returns an error that names what to change, before it keys,
// loads or prints anything, for what it cannot run or key.
func TestTrainedRunRejects(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	nanLR, single := DefaultRLConfig(), DefaultRLConfig()
	nanLR.LR = math.NaN()
	single.GroupSize = 1
	tests := []struct {
		name  string
		tasks []Task
		cfg   RLConfig
		steps int
		want  string
	}{
		{"NaN learning rate", train, nanLR, 1, "LR = NaN"},
		{"negative steps", train, DefaultRLConfig(), -3, "steps = -3, want >= 1"},
		{"groups of one", train, single, 1, "GroupSize = 1, want >= 2"},
		{"no tasks", nil, DefaultRLConfig(), 1, "no tasks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := mustStore(t)
			log := captureNotices(store)
			_, err := TrainedRun(store, base, tok, tt.tasks, tt.cfg, tt.steps, "", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if log.Len() > 0 {
				t.Errorf("printed %q before rejecting", log.String())
			}
		})
	}
	if _, err := TrainedRun(nil, base, tok, train, DefaultRLConfig(), 1, "", nil); err == nil ||
		!strings.Contains(err.Error(), "the store is nil") {
		t.Errorf("a nil store: %v", err)
	}
}

// TestBaseConfigValidate checks that BaseFrom rejects each kind of invalid setting, naming it, before it keys
// (a NaN would panic there) or trains anything.
func TestBaseConfigValidate(t *testing.T) {
	tok, _ := testSetup(t)
	if err := DefaultBaseConfig().Validate(); err != nil {
		t.Fatalf("DefaultBaseConfig: %v", err)
	}
	tests := []struct {
		name string
		edit func(*BaseConfig)
		want string
	}{
		{"negative demonstrations", func(c *BaseConfig) { c.MappingDemos = -5000 }, "MappingDemos = -5000"},
		{"no demonstrations", func(c *BaseConfig) { c.Demos, c.MappingDemos = 0, 0 }, "at least one demonstration"},
		{"no steps", func(c *BaseConfig) { c.Steps = 0 }, "Steps = 0"},
		{"NaN learning rate", func(c *BaseConfig) { c.LR = math.NaN() }, "LR = NaN"},
		{"probability above 1", func(c *BaseConfig) { c.ReadProb = 1.5 }, "ReadProb = 1.5"},
		{"negative probability", func(c *BaseConfig) { c.MappingRightProb = -1 }, "MappingRightProb = -1"},
		{"re-read probability above 1", func(c *BaseConfig) { c.RereadProb = 1.5 }, "RereadProb = 1.5"},
		{"give-up probability above 1", func(c *BaseConfig) { c.GiveUpAfterReadProb = 2 }, "GiveUpAfterReadProb = 2"},
		{"negative read-choice weight", func(c *BaseConfig) { c.ReadChoiceWeight = -0.1 }, "ReadChoiceWeight = -0.1, want a loss weight"},
		{"tests that do not sum to 1", func(c *BaseConfig) { c.TestsAfterEdit = []float64{0.5, 0.4} }, "TestsAfterEdit"},
		{"no test distribution", func(c *BaseConfig) { c.TestsAfterEdit = nil }, "TestsAfterEdit"},
		{"blind tests out of range", func(c *BaseConfig) { c.BlindTestsAfterEdit = []float64{2, -1} }, "BlindTestsAfterEdit holds 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultBaseConfig()
			tt.edit(&c)
			_, err := BaseFrom(mustStore(t), tok, c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
