package ch12

import (
	"os"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/store"
)

func TestSetupLoadsNothingAndHeldOutIsStored(t *testing.T) {
	t.Setenv(store.Env, t.TempDir())
	ch, err := Setup()
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Train) != 20 || len(ch.HeldOutTasks) != 10 || ch.Tok.VocabSize() == 0 {
		t.Fatalf("Setup: %d training tasks, %d held-out, vocabulary %d", len(ch.Train), len(ch.HeldOutTasks),
			ch.Tok.VocabSize())
	}
	if entries, err := os.ReadDir(ch.Store.Dir()); err != nil || len(entries) != 0 {
		t.Fatalf("Setup stored or trained something: %v (%v)", entries, err)
	}
	policy, err := gomlxmodel.New(ch.Engine, gomlxmodel.DefaultConfig(ch.Tok.VocabSize()), 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := agentrl.DefaultRLConfig()
	cfg.MaxTurns = 2 // a random policy: keep the episodes short
	computed, err := ch.HeldOut(policy, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if computed.Episodes != HeldOutEpisodes*len(ch.HeldOutTasks) {
		t.Errorf("HeldOut: %d episodes", computed.Episodes)
	}
	direct, err := agentrl.Evaluate(policy, ch.HeldOutTasks, ch.Tok, HeldOutEpisodes, agentrl.NewRNG(HeldOutSeed), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := ch.HeldOut(policy, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if loaded != computed || direct != computed {
		t.Errorf("HeldOut computed %+v, loaded %+v, Evaluate %+v", computed, loaded, direct)
	}
	cfg.MaxTurns = 3
	if other, err := ch.HeldOut(policy, cfg); err != nil || other == computed {
		t.Errorf("HeldOut under another config returned the stored %+v (%v)", other, err)
	}
}

// TestWords checks that Words widens the tokenizer by the words it lacks, and only then.
func TestWords(t *testing.T) {
	ch := testChapter(t)
	if same, err := ch.With(Words("read", "passed")); err != nil || same != ch {
		t.Errorf("words the vocabulary has: %v, a new chapter %v", err, same != ch)
	}
	wider, err := ch.With(Words("turns", "left", "turns"))
	if err != nil {
		t.Fatal(err)
	}
	if wider.Tok.VocabSize() != ch.Tok.VocabSize()+1 || len(wider.Tok.Unknown("turns left")) != 0 {
		t.Errorf("vocabulary %d, was %d", wider.Tok.VocabSize(), ch.Tok.VocabSize())
	}
}

// TestIn checks that a base agent trained in an environment of one's own is stored apart from the chapter's, that
// From's agent is the base, and that the options Setup alone takes and nil options are refused.
func TestIn(t *testing.T) {
	s, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var notices strings.Builder
	s.Notices = &notices
	recipe := agentrl.DefaultBaseConfig()
	recipe.Demos, recipe.MappingDemos, recipe.Steps, recipe.BatchSize = 8, 0, 2, 4
	ch, err := Setup(InStore(s), Recipe(recipe))
	if err != nil {
		t.Fatal(err)
	}
	base, err := ch.Base()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]Option{{In(nil)}, {From(nil)}, {nil}, {InStore(s)}} {
		if _, err := ch.With(bad...); err == nil {
			t.Errorf("With(%d options): no error, want one", len(bad))
		}
	}
	from, err := ch.With(From(base))
	if err != nil {
		t.Fatal(err)
	}
	if same, err := from.Base(); err != nil || same != base {
		t.Errorf("From(base).Base(): %v, another agent %v", err, same != base)
	}
	inEnv, err := ch.With(In(agentrl.EarlyStop{Cfg: agentrl.DefaultRLConfig(), MaxInvalid: 1}))
	if err != nil {
		t.Fatal(err)
	}
	in, err := inEnv.Base()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(notices.String(), "cache: computed rl_base-"); n != 2 || in == base {
		t.Errorf("%d base agents computed, want 2 (the chapter's and the environment's):\n%s", n, notices.String())
	}
}
