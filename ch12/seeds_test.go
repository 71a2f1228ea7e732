package ch12

import (
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
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
