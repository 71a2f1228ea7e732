package main

import (
	"strings"
	"sync"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/store"
)

// TestBesideSeedsAgrees runs the six-seed table's default arm under two seeds as the command does (defaultRun), then
// ch12.BesideSeeds with that arm on the same store: BesideSeeds trains nothing (the runs have one key) and its
// held-out statistics are the table's.
func TestBesideSeedsAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two 40-step runs")
	}
	s, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var trained []string
	s.Observe = func(e store.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind == store.Computed && strings.HasPrefix(e.Key, "train_grpo") {
			trained = append(trained, e.Key)
		}
	}
	setup, err := ch12.Setup(ch12.InStore(s))
	if err != nil {
		t.Fatal(err)
	}
	base, err := gomlxmodel.New(setup.Engine, gomlxmodel.DefaultConfig(setup.Tok.VocabSize()), 3)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := setup.With(ch12.From(base))
	if err != nil {
		t.Fatal(err)
	}
	rl := agentrl.DefaultRLConfig()
	rl.PromptsPerStep, rl.GroupSize, rl.MaxTurns = 2, 2, 2
	l := lab{ch: ch, base: base, rl: rl}
	var table []agentrl.Stats
	for _, seed := range ch12.Seeds(2) {
		var o outcome
		cfg := rl
		cfg.Seed = seed
		if _, err := l.defaultRun(&o, cfg); err != nil {
			t.Fatal(err)
		}
		table = append(table, o.defaultHeld)
	}
	mu.Lock()
	before := len(trained)
	mu.Unlock()
	b, err := ch12.BesideSeeds(ch, ch12.Arm{Cfg: rl}, ch12.Arm{Cfg: rl}, ch12.Seeds(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(trained) != before || before != 2 {
		t.Errorf("the table trained %d runs and BesideSeeds %d more, want 2 and none: %v", before, len(trained)-before, trained)
	}
	for i := range table {
		if b.Chapter[i] != table[i] || b.Changed[i] != table[i] {
			t.Errorf("seed %d: the table holds %+v, BesideSeeds %+v and %+v", i, table[i], b.Chapter[i], b.Changed[i])
		}
	}
}
