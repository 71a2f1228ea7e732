package ch12

import (
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// testChapter is the chapter with a small random policy in place of the base agent, in a store of its own.
func testChapter(t *testing.T) *Chapter {
	t.Helper()
	t.Setenv(agentrl.CacheEnv, t.TempDir())
	ch, err := Setup()
	if err != nil {
		t.Fatal(err)
	}
	ch.Store.Notices = testWriter{t}
	base, err := gomlxmodel.New(gomlxmodel.DefaultConfig(ch.Tok.VocabSize()), 3)
	if err != nil {
		t.Fatal(err)
	}
	ch.base = func() (*gomlxmodel.Model, error) { return base, nil }
	return ch
}

// testWriter logs what the store notes.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// freshCritic and otherCritic are warm-ups that count their calls.
var warmUps int

func freshCritic(base *gomlxmodel.Model, _ []agentrl.Task, _ *agentrl.Tokenizer, _ agentrl.RLConfig) (*gomlxmodel.Critic, error) {
	warmUps++
	return gomlxmodel.NewCritic(base, 1)
}

func otherCritic(base *gomlxmodel.Model, _ []agentrl.Task, _ *agentrl.Tokenizer, _ agentrl.RLConfig) (*gomlxmodel.Critic, error) {
	warmUps++
	return gomlxmodel.NewCritic(base, 2)
}

// TestCriticIsStoredByCode checks that Critic computes a warm-up once per configuration and warm-up code, and
// loads it after.
func TestCriticIsStoredByCode(t *testing.T) {
	ch := testChapter(t)
	cfg := agentrl.DefaultRLConfig()
	warmUps = 0
	for _, tc := range []struct {
		name  string
		warm  WarmFunc
		cfg   func(agentrl.RLConfig) agentrl.RLConfig
		calls int
	}{
		{"first", freshCritic, func(c agentrl.RLConfig) agentrl.RLConfig { return c }, 1},
		{"again: loaded", freshCritic, func(c agentrl.RLConfig) agentrl.RLConfig { return c }, 1},
		{"another warm-up", otherCritic, func(c agentrl.RLConfig) agentrl.RLConfig { return c }, 2},
		{"another configuration", freshCritic, func(c agentrl.RLConfig) agentrl.RLConfig { c.Reward.StepPenalty = 0.05; return c }, 3},
	} {
		if _, err := ch.Critic(tc.cfg(cfg), tc.warm); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if warmUps != tc.calls {
			t.Errorf("%s: %d warm-ups so far, want %d", tc.name, warmUps, tc.calls)
		}
	}
}

// TestRunsRejectMissingFunctions checks that the runs that take functions say which one is missing, before
// anything is trained or loaded.
func TestRunsRejectMissingFunctions(t *testing.T) {
	ch := &Chapter{base: func() (*gomlxmodel.Model, error) {
		t.Fatal("the base agent was asked for")
		return nil, nil
	}}
	cfg := agentrl.DefaultRLConfig()
	if _, err := ch.Critic(cfg, nil); err == nil {
		t.Error("Critic(nil warm-up): no error")
	}
	if _, err := ContextRun(ch, "keep_obs=1", nil, agentrl.ContextStep, cfg); err == nil {
		t.Error("ContextRun(nil view): no error")
	}
	if _, err := ContextRun(ch, "keep_obs=1", agentrl.KeepObs(1), nil, cfg); err == nil {
		t.Error("ContextRun(nil step): no error")
	}
}
