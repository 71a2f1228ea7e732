package agentrl

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
)

// The demonstrations as they were played before the base agent's environment became an option (WithBaseEnv),
// verbatim but for the name: the reference that the default path is held to.

// oldDemonstrations plays c.Demos + c.MappingDemos scripted episodes on renamed copies of tasks in the real
// environment, so their token layout is exactly what the sampler produces.
func (c BaseConfig) oldDemonstrations(tasks []Task, tok *Tokenizer) ([]Trajectory, error) {
	rng := NewRNG(c.Seed)
	reward, err := MakeReward("hidden", RewardOptions{})
	if err != nil {
		return nil, err
	}
	demos := make([]Trajectory, 0, c.Demos+c.MappingDemos)
	readID := tok.Encode(ToolRead)[0]
	for i := range c.Demos + c.MappingDemos {
		mapping := i >= c.Demos
		task := RandomizeNames(tasks[rng.IntN(len(tasks))], rng)
		env, err := NewEditBudgetEnv(c.MaxTurns, reward, 1)
		if err != nil {
			return nil, err
		}
		e := NewEpisode(env, task, tok, c.MaxTurns, ContextLen)
		calls, failed := c.demoCalls(task, mapping, rng), false
		for k := 0; k < len(calls) && !e.Done; k++ {
			if len(calls[k]) == 1 && calls[k][0] == ToolSubmit && failed && rng.Float64() < c.StallOnFailProb {
				calls = c.stall(calls[:k], rng)
			}
			ids := tok.Encode(CallText(calls[k][0], calls[k][1:]...))
			e.Act(ids, make([]float32, len(ids)))
			if len(calls[k]) == 1 && calls[k][0] == ToolTest {
				failed = testFailed(e.LastObs())
			}
		}
		demo := MakeTrajectory(e)
		if mapping { // the choice to read weighs ReadChoiceWeight (0: no loss); the rest of the read call is learned
			for j := range demo.ActionMask {
				if demo.Owner[j+1] == OwnerPolicy && demo.Turn[j+1] == 0 && demo.IDs[j+1] == readID {
					// trainBase weighs a token by mask × advantage, and both are this value.
					demo.ActionMask[j] = float32(math.Sqrt(c.ReadChoiceWeight))
				}
			}
		}
		demos = append(demos, demo)
	}
	return demos, nil
}

// tinyBase is a base configuration that trains in seconds: a few demonstrations, two steps.
func tinyBase() BaseConfig {
	c := DefaultBaseConfig()
	c.Demos, c.MappingDemos, c.Steps, c.BatchSize = 24, 8, 2, 4
	return c
}

// briefTests is the chapter's environment with a test's observation cut to "passed k of n": a reader's change of
// what the agent observes.
type briefTests struct{ Env }

func (b briefTests) Step(action string) (string, float64, bool, Info) {
	obs, reward, done, info := b.Env.Step(action)
	if f := strings.Fields(obs); len(f) > 4 && f[0] == "passed" {
		obs = strings.Join(f[:4], " ")
	}
	return obs, reward, done, info
}

// chapterBaseEnv makes the environment the chapter's demonstrations are played in (tinyBase's MaxTurns).
func chapterBaseEnv() (Env, error) {
	return NewEditBudgetEnv(DefaultBaseConfig().MaxTurns, must(MakeReward(RewardHidden, RewardOptions{})), 1)
}

// briefBaseEnv makes briefTests environments.
func briefBaseEnv() (Env, error) {
	env, err := chapterBaseEnv()
	return briefTests{env}, err
}

// TestBaseEnvDefaultIsBitIdentical checks that without WithBaseEnv the demonstrations are those played before the
// option existed and the base agent is the one they train, byte for byte, also through BaseFrom, whose key is
// BaseKey's; that a factory making the chapter's environment trains the same agent under another key; and that
// a reader's environment changes the demonstrations and the key.
func TestBaseEnvDefaultIsBitIdentical(t *testing.T) {
	tok, train := testSetup(t)
	c := tinyBase()
	old := must(c.oldDemonstrations(train, tok))
	if !reflect.DeepEqual(must(c.Demonstrations(train, tok)), old) {
		t.Fatal("the default demonstrations differ from the ones played before WithBaseEnv")
	}
	want := modelBytes(t, must(TrainBase(train, tok, c)))
	if got := modelBytes(t, must(BaseFrom(mustStore(t), tok, c))); !bytes.Equal(got, want) {
		t.Error("BaseFrom differs from TrainBase")
	}
	if got := modelBytes(t, must(TrainBase(train, tok, c, WithBaseEnv(chapterBaseEnv)))); !bytes.Equal(got, want) {
		t.Error("WithBaseEnv of the chapter's environment trains another agent")
	}
	demos := must(c.Demonstrations(train, tok, WithBaseEnv(briefBaseEnv)))
	if reflect.DeepEqual(demos, old) {
		t.Error("a reader's environment left the demonstrations unchanged")
	}
	failing := 0
	for _, d := range old {
		if strings.Contains(tok.Decode(d.IDs), "failed on") {
			failing++
		}
	}
	if failing == 0 {
		t.Fatal("no demonstration shows a failing input in the chapter's environment: the check below checks nothing")
	}
	for i, d := range demos {
		if strings.Contains(tok.Decode(d.IDs), "failed on") {
			t.Fatalf("demonstration %d shows a failing input in the brief environment", i)
		}
	}
	keyOf := func(opts ...BaseOption) string { return baseKey(tok, c, must(applyBaseOptions("test", opts))) }
	keys := map[string]string{}
	for name, k := range map[string]string{
		"none":                keyOf(),
		"chapter env":         keyOf(WithBaseEnv(chapterBaseEnv)),
		"brief env":           keyOf(WithBaseEnv(briefBaseEnv)),
		"library env, cfg":    keyOf(WithBaseEnv(EnvFactoryOf(DefaultRLConfig()), DefaultRLConfig())),
		"library env, params": keyOf(WithBaseEnv(EnvFactoryOf(DefaultRLConfig()), "other")),
	} {
		for other, k2 := range keys {
			if k2 == k {
				t.Errorf("%s and %s have one key", name, other)
			}
		}
		keys[name] = k
	}
	if keys["none"] != BaseKey(tok, c) {
		t.Error("the default key is not BaseKey's")
	}
}

// TestBaseOptionsRejected checks that invalid base options are refused, before anything is trained, with a
// message that says what to change.
func TestBaseOptionsRejected(t *testing.T) {
	tok, train := testSetup(t)
	env := func() (Env, error) { return MakeEnv(DefaultRLConfig()) }
	for _, tc := range []struct {
		name string
		opts []BaseOption
		want string
	}{
		{"nil option", []BaseOption{nil}, "option 0 is nil"},
		{"nil factory", []BaseOption{WithBaseEnv(nil)}, "pass an EnvFactory"},
		{"twice", []BaseOption{WithBaseEnv(env), WithBaseEnv(env)}, "given twice"},
		{"library factory without params", []BaseOption{WithBaseEnv(EnvFactoryOf(DefaultRLConfig()))}, "pass them as params"},
		{"unencodable param", []BaseOption{WithBaseEnv(env, math.Inf(1))}, "cannot be keyed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for fn, call := range map[string]func() error{
				"BaseFrom":       func() error { _, err := BaseFrom(mustStore(t), tok, tinyBase(), tc.opts...); return err },
				"TrainBase":      func() error { _, err := TrainBase(train, tok, tinyBase(), tc.opts...); return err },
				"Demonstrations": func() error { _, err := tinyBase().Demonstrations(train, tok, tc.opts...); return err },
			} {
				if err := call(); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want an error saying %q", fn, err, tc.want)
				}
			}
		})
	}
}
