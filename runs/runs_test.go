package runs_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/runs"
	"github.com/agentrl-go/agentrl/store"
)

// sigEnv makes Cfg's environments and sends the process an interrupt, as Jupyter's "interrupt the kernel" does,
// while it makes the sig.at-th one: in the middle of a step.
type sigEnv struct{ Cfg agentrl.RLConfig }

func (e sigEnv) NewEnv() (agentrl.Env, error) {
	if err := interruptAt(); err != nil {
		return nil, err
	}
	return agentrl.MakeEnv(e.Cfg)
}

func setup(t *testing.T) (*gomlxmodel.Model, agentrl.GRPO) {
	t.Helper()
	all, err := agentrl.MakeTasks(agentrl.SplitAll)
	if err != nil {
		t.Fatal(err)
	}
	train, err := agentrl.MakeTasks(agentrl.SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	tok := agentrl.BuildTokenizer(all)
	cfg := gomlxmodel.DefaultConfig(tok.VocabSize())
	cfg.Layers, cfg.DModel, cfg.Heads, cfg.MLP = 1, 32, 2, 64
	base, err := gomlxmodel.New(runs.TestEngine(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	rl := agentrl.DefaultRLConfig()
	rl.PromptsPerStep, rl.GroupSize, rl.MaxTurns = 2, 4, 3
	return base, agentrl.GRPO{Tasks: train, Tok: tok, Cfg: rl, Steps: 4, Env: sigEnv{rl}, LogEpisodes: true}
}

func open(t *testing.T, notices io.Writer) *store.Store {
	t.Helper()
	s, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Notices = notices
	s.CheckpointEvery = 1 << 40 // only an interrupt saves
	return s
}

func encode(t *testing.T, r *agentrl.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := agentrl.WriteRun(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestTrainResumes interrupts a run in the middle of its third step and runs it again: it resumes from the progress
// the interrupt saved and ends bit-identical to the run that was never interrupted (policy with its optimizer
// state, history, episode log), and the saved progress is gone once the result is stored; a third call loads it.
func TestTrainResumes(t *testing.T) {
	base, loop := setup(t)
	sig.arm(0)
	ref, err := runs.Train(open(t, io.Discard), base, loop)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	s := open(t, &log)
	sig.arm(2*8 + 3) // 8 environments a step
	if _, err := runs.Train(s, base, loop); !errors.Is(err, store.ErrInterrupted) {
		t.Fatalf("interrupted run: %v, want ErrInterrupted", err)
	}
	sig.arm(0)
	got, err := runs.Train(s, base, loop)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "after step 2") {
		t.Errorf("the resumed run did not start after step 2:\n%s", log.String())
	}
	if !bytes.Equal(encode(t, got), encode(t, ref)) {
		t.Error("the resumed run differs from the uninterrupted one")
	}
	if partial, _ := filepath.Glob(filepath.Join(s.Dir(), "*.partial.bin")); len(partial) > 0 {
		t.Errorf("progress left behind: %v", partial)
	}
	log.Reset()
	again, err := store.Open(s.Dir()) // another program: it reads the entry from disk
	if err != nil {
		t.Fatal(err)
	}
	again.Notices = &log
	if _, err := runs.Train(again, base, loop); err != nil || !strings.Contains(log.String(), "cache: loaded train_grpo-") {
		t.Errorf("third call: %v, log %q, want it loaded", err, log.String())
	}
}

// TestTrainKeysAndRefuses checks the two runs that once shared a key (an estimator's parameters, an environment's
// argument) and that a run that cannot be keyed or trained is refused before anything is stored.
func TestTrainKeysAndRefuses(t *testing.T) {
	base, loop := setup(t)
	key := func(l agentrl.Loop) string {
		t.Helper()
		k, err := runs.Key(base, l)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	turn, token := loop, loop
	turn.Advantages = agentrl.CreditAdvantages{Scheme: "turn", Lambda: 0.9}
	token.Advantages = agentrl.CreditAdvantages{Scheme: "token", Lambda: 0.95}
	if key(turn) == key(token) {
		t.Error("turn λ0.9 and token λ0.95 share a key")
	}
	stop1, stop2 := loop, loop
	stop1.Env, stop2.Env = agentrl.EarlyStop{Cfg: loop.Cfg, MaxInvalid: 1}, agentrl.EarlyStop{Cfg: loop.Cfg, MaxInvalid: 2}
	if key(stop1) == key(stop2) {
		t.Error("EarlyStop 1 and 2 share a key")
	}
	s := open(t, io.Discard)
	one := loop
	one.Cfg.GroupSize = 1
	lambda := 0.9
	captured := loop
	captured.Advantages = agentrl.AdvantageFunc(func(sb agentrl.StepBatch) ([][]float32, error) {
		return agentrl.CreditAdvantages{Scheme: "turn", Lambda: lambda}.Advantages(sb)
	})
	for _, tc := range []struct {
		name string
		loop agentrl.Loop
		want string
	}{
		{"groups of one", one, "GroupSize = 1"},
		{"a captured value", captured, "captures lambda"},
	} {
		if _, err := runs.Train(s, base, tc.loop); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(s.Dir(), "*.bin")); len(entries) > 0 {
		t.Errorf("refused runs stored %v", entries)
	}
}

// penaltyEnv makes environments whose step penalty it reads from the process's environment: what no key can hold.
type penaltyEnv struct{ Cfg agentrl.RLConfig }

func (e penaltyEnv) NewEnv() (agentrl.Env, error) {
	cfg := e.Cfg
	if p, err := strconv.ParseFloat(os.Getenv("RUNS_TEST_PENALTY"), 64); err == nil {
		cfg.Reward.StepPenalty = p
	}
	return agentrl.MakeEnv(cfg)
}

// fileEnv makes environments whose step penalty it reads from a file: what no key can hold.
type fileEnv struct {
	Cfg  agentrl.RLConfig
	Path string
}

func (e fileEnv) NewEnv() (agentrl.Env, error) {
	cfg := e.Cfg
	if b, err := os.ReadFile(e.Path); err == nil {
		if p, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil {
			cfg.Reward.StepPenalty = p
		}
	}
	return agentrl.MakeEnv(cfg)
}

// TestTrainVerifies checks that a run whose code reads what no key can hold (an environment variable, a file) is
// computed at every call and never stored, in the same program as in another (a run of outside code that reads
// nothing of the kind is verified at every serve: TestBaseVerifiedWhateverRanBefore), and that a run of the
// library's code alone is loaded without verification.
func TestTrainVerifies(t *testing.T) {
	base, loop := setup(t)
	penaltyFile := filepath.Join(t.TempDir(), "penalty")
	for _, src := range []struct {
		name, open string
		env        agentrl.EnvMaker
		set        func(string)
	}{
		{"an environment variable", "os.Getenv", penaltyEnv{loop.Cfg}, func(v string) { t.Setenv("RUNS_TEST_PENALTY", v) }},
		{"a file", "os.ReadFile", fileEnv{loop.Cfg, penaltyFile}, func(v string) {
			if err := os.WriteFile(penaltyFile, []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(src.name, func(t *testing.T) {
			loop := loop
			loop.Env = src.env
			verifies(t, base, loop, src.open, src.set)
		})
	}
	var log bytes.Buffer
	again := open(t, &log)
	library := loop
	library.Env = agentrl.EarlyStop{Cfg: loop.Cfg, MaxInvalid: 1}
	if _, err := runs.Train(again, base, library); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	reopened, err := store.Open(again.Dir())
	if err != nil {
		t.Fatal(err)
	}
	reopened.Notices = &log
	if _, err := runs.Train(reopened, base, library); err != nil || strings.Contains(log.String(), "verif") ||
		!strings.Contains(log.String(), "cache: loaded") {
		t.Errorf("a run of the library's code: %v, log %q: want it loaded without verification", err, log.String())
	}
}

// verifies checks that loop, whose environment reads (through what reads names) the value set gives, which no
// key can hold, is never served: computed at every call, in the same program and in another, never stored, saying
// why, and computed anew when set changes what it reads (a file that mattered only from the second step on would
// escape any check of a step: nothing stored is served).
func verifies(t *testing.T, base *gomlxmodel.Model, loop agentrl.GRPO, reads string, set func(string)) {
	var log bytes.Buffer
	s := open(t, &log)
	set("0")
	ref, err := runs.Train(s, base, loop)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "not stored (its code reads "+reads) {
		t.Errorf("the first run: log %q, want it computed and not stored, naming %s", log.String(), reads)
	}
	for _, program := range []string{"the same program", "another program"} {
		again := s
		if program == "another program" {
			if again, err = store.Open(s.Dir()); err != nil {
				t.Fatal(err)
			}
			again.Notices = &log
		}
		log.Reset()
		same, err := runs.Train(again, base, loop)
		if err != nil || strings.Contains(log.String(), "cache: loaded") || !bytes.Equal(encode(t, same), encode(t, ref)) {
			t.Errorf("%s, the same run: %v, log %q: want it computed again, bit-identical", program, err, log.String())
		}
		set("0.3") // what the key cannot see changes the run
		other, err := runs.Train(again, base, loop)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(encode(t, other), encode(t, ref)) {
			t.Errorf("%s: the run computed after the change equals the one before", program)
		}
		set("0")
	}
	if entries, _ := filepath.Glob(filepath.Join(s.Dir(), "train_grpo-*")); len(entries) > 0 {
		t.Errorf("stored: %v, want nothing", entries)
	}
}
