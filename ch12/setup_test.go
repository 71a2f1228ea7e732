package ch12

import (
	"os"
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
	policy, err := gomlxmodel.New(gomlxmodel.DefaultConfig(ch.Tok.VocabSize()), 3)
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

// TestWithWords checks that WithWords widens the tokenizer by the words it lacks, and only then.
func TestWithWords(t *testing.T) {
	ch := testChapter(t)
	if same, err := ch.WithWords("read", "passed"); err != nil || same != ch {
		t.Errorf("words the vocabulary has: %v, a new chapter %v", err, same != ch)
	}
	wider, err := ch.WithWords("turns", "left", "turns")
	if err != nil {
		t.Fatal(err)
	}
	if wider.Tok.VocabSize() != ch.Tok.VocabSize()+1 || len(wider.Tok.Unknown("turns left")) != 0 {
		t.Errorf("vocabulary %d, was %d", wider.Tok.VocabSize(), ch.Tok.VocabSize())
	}
}
