package ch12

import (
	"errors"
	"maps"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/store"
)

// lockedBuilder collects the store's lines from the runs BesideSeeds trains at once.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBesideSeeds trains a changed arm and the chapter's arm under two seeds: four runs under four keys, a summary
// whose numbers are the per-seed runs' held-out statistics, and a second call that loads everything.
func TestBesideSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("trains four 40-step runs")
	}
	ch := testChapter(t)
	var notes lockedBuilder
	ch.Store.Notices = &notes
	cfg := agentrl.DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 2
	changed := cfg
	changed.Reward.StepPenalty = 0.1
	b, err := BesideSeeds(ch, Arm{Cfg: changed}, Arm{Cfg: cfg}, Seeds(2))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, m := range regexp.MustCompile(`cache: computed (train_grpo-\S+)`).FindAllStringSubmatch(notes.String(), -1) {
		keys[m[1]] = true
	}
	if len(keys) != 4 {
		t.Errorf("%d runs computed under their own keys, want 4:\n%s", len(keys), notes.String())
	}
	for i, s := range b.Seeds {
		for _, arm := range []struct {
			cfg  agentrl.RLConfig
			want agentrl.Stats
		}{{changed, b.Changed[i]}, {cfg, b.Chapter[i]}} {
			c := arm.cfg
			c.Seed = s
			run, err := ch.Run(c)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := ch.HeldOut(run.Policy, c); err != nil || got != arm.want {
				t.Errorf("seed %d: the summary holds %+v, the run's held-out statistics are %+v (%v)", s, arm.want, got, err)
			}
		}
	}
	notes = lockedBuilder{}
	again, err := BesideSeeds(ch, Arm{Cfg: changed}, Arm{Cfg: cfg}, Seeds(2))
	if err != nil || strings.Contains(notes.String(), "cache: computed") || again.String() != b.String() {
		t.Errorf("a second call: %v, computed something %v, the same summary %v", err,
			strings.Contains(notes.String(), "cache: computed"), again.String() == b.String())
	}
	for _, want := range []string{"RL seeds 0-1", "held-out pass", "chapter's arm", "seeds' spread"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, b)
		}
	}
	t.Logf("summary:\n%s", b)
	if _, err := BesideSeeds(ch, Arm{Cfg: changed}, Arm{Cfg: cfg}, Seeds(1)); err == nil {
		t.Error("one seed: no error, want one (no spread)")
	}
}

// TestBesideSeedsResumes interrupts BesideSeeds under three seeds once a run is stored and another is under way: the
// call stops with store.ErrInterrupted and starts no other run, and the next call trains no run that was stored and resumes the one
// that was under way from its saved progress.
func TestBesideSeedsResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("trains six 40-step runs")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // two runs at a time: later ones start after a run is stored
	ch := testChapter(t)
	ch.Store.ProgressEvery = time.Millisecond
	sigs := make(chan os.Signal, 1) // the test's own: a SIGINT never ends the test binary
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)

	var mu sync.Mutex
	started, computed, resumed := map[string]bool{}, map[string]int{}, map[string]bool{}
	sent := false
	ch.Store.Observe = func(e store.Event) {
		mu.Lock()
		defer mu.Unlock()
		t.Log(e)
		switch {
		case e.Kind == store.Computed && strings.HasPrefix(e.Key, "train_grpo"):
			computed[e.Key]++
		case e.Kind == store.Computing && strings.HasPrefix(e.Key, "train_grpo"):
			started[e.Key] = true
		case e.Kind == store.Resuming:
			resumed[strings.TrimSuffix(e.Key, ".partial")] = true
		case e.Kind == store.Progressed && e.Step >= 2 && e.Step <= e.Steps/2 && len(computed) > 0 && !sent:
			sent = true // a run is stored and this one is under way, its interrupt watch on
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Error(err)
			}
		}
	}
	cfg := agentrl.DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 2
	changed := cfg
	changed.Reward.StepPenalty = 0.1
	_, err := BesideSeeds(ch, Arm{Cfg: changed}, Arm{Cfg: cfg}, Seeds(3))
	if !errors.Is(err, store.ErrInterrupted) {
		t.Fatalf("interrupted: %v, want an error wrapping store.ErrInterrupted", err)
	}
	mu.Lock()
	first, began := maps.Clone(computed), len(started)
	mu.Unlock()
	if len(first) == 0 || began == 6 {
		t.Fatalf("%d of 6 runs stored and %d started before the interrupted call ended, want some stored and not all "+
			"started:\n%v", len(first), began, err)
	}
	if _, err := BesideSeeds(ch, Arm{Cfg: changed}, Arm{Cfg: cfg}, Seeds(3)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(computed) != 6 {
		t.Errorf("%d runs stored in all, want 6", len(computed))
	}
	var resumedOne bool
	for key, n := range computed {
		if n > 1 {
			t.Errorf("%s trained %d times: a stored run was trained again", key, n)
		}
		resumedOne = resumedOne || (first[key] == 0 && resumed[key])
	}
	if !resumedOne {
		t.Errorf("no run of the second call resumed from the progress the interrupt saved (resumed: %v)", resumed)
	}
}

// TestBesideVerdict checks the summary's arithmetic on made-up statistics: a difference is larger than the seeds'
// spread where the mean of the paired differences exceeds two of its standard errors.
func TestBesideVerdict(t *testing.T) {
	pass := func(ps ...float64) []agentrl.Stats {
		out := make([]agentrl.Stats, len(ps))
		for i, p := range ps {
			out[i] = agentrl.Stats{PassRate: p}
		}
		return out
	}
	for _, tc := range []struct {
		name             string
		changed, chapter []agentrl.Stats
		want             string
	}{
		{"shifted", pass(0.6, 0.7, 0.8), pass(0.5, 0.6, 0.7), "+0.100 ± 0.000: larger than the seeds' spread"},
		{"noise", pass(0.6, 0.5, 0.8), pass(0.5, 0.6, 0.7), "+0.033 ± 0.067: within the seeds' spread"},
		{"lower", pass(0.1, 0.25, 0.2), pass(0.5, 0.6, 0.7), "-0.417 ± 0.044: larger than the seeds' spread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Beside{Seeds: Seeds(3), Changed: tc.changed, Chapter: tc.chapter}
			s := b.String()
			if !strings.HasPrefix(s, "RL seeds 0-2 ") || !strings.Contains(s, tc.want) {
				t.Errorf("summary:\n%s\nwant a held-out pass line with %q", s, tc.want)
			}
			if alt := b.Figure().Alt(); !strings.Contains(alt, "held-out pass") || !strings.Contains(alt, "chapter's arm") {
				t.Errorf("figure: %s", alt)
			}
		})
	}
}

// TestBesideSeedsLoop runs an arm made by a Loop: GRPO's loop as Run makes it is the same run under the same key (two
// runs trained for two arms under two seeds, equal statistics); a loop that ignores the seed it is given, or a Loop
// with Opts, is refused before anything trains.
func TestBesideSeedsLoop(t *testing.T) {
	ch := testChapter(t)
	cfg := agentrl.DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 2
	grpo := func(c agentrl.RLConfig) agentrl.Loop {
		return agentrl.GRPO{Tasks: ch.Train, Tok: ch.Tok, Cfg: c, Steps: Steps, LogEpisodes: true}
	}
	for _, bad := range []struct {
		arm  Arm
		want string
	}{
		{Arm{Cfg: cfg, Loop: func(c agentrl.RLConfig) agentrl.Loop { return grpo(cfg) }}, "a loop of seed 0 for seed 1"},
		{Arm{Cfg: cfg, Loop: grpo, Opts: []agentrl.RunOption{agentrl.InEnv(nil)}}, "takes no Opts"},
		{Arm{Cfg: cfg, Loop: func(agentrl.RLConfig) agentrl.Loop { return nil }}, "made no loop"},
	} {
		if _, err := bad.arm.loopRun(ch, agentrl.RLConfig{Seed: 1}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v, want an error with %q", err, bad.want)
		}
	}
	if testing.Short() {
		t.Skip("trains two 40-step runs")
	}
	var mu sync.Mutex
	trained := 0
	ch.Store.Observe = func(e store.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind == store.Computed && strings.HasPrefix(e.Key, "train_grpo") {
			trained++
		}
	}
	b, err := BesideSeeds(ch, Arm{Cfg: cfg, Loop: grpo}, Arm{Cfg: cfg}, Seeds(2))
	if err != nil {
		t.Fatal(err)
	}
	if trained != 2 || !slices.Equal(b.Changed, b.Chapter) {
		t.Errorf("%d runs trained, want 2 (one key for both arms); statistics %+v and %+v", trained, b.Changed, b.Chapter)
	}
}
