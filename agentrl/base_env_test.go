package agentrl

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// The demonstrations as they were played before the base agent's environment became a seam (BaseRun.Env),
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
		if mapping { // the choice to read carries no loss; the rest of the read call is learned
			for j := range demo.ActionMask {
				if demo.Owner[j+1] == OwnerPolicy && demo.Turn[j+1] == 0 && demo.IDs[j+1] == readID {
					demo.ActionMask[j] = 0
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

// TestBaseEnvDefaultIsBitIdentical checks that without an Env the demonstrations are those played before the
// seam existed and the base agent is the one they train, byte for byte, through TrainBase and BaseRun.Train; that
// an Env making the chapter's environment trains the same agent; that a reader's environment changes the
// demonstrations; and that a base training stopped after a step and resumed from its saved model and generator
// trains the same agent.
func TestBaseEnvDefaultIsBitIdentical(t *testing.T) {
	tok, train := testSetup(t)
	c := tinyBase()
	old := must(c.oldDemonstrations(train, tok))
	b := BaseRun{Engine: testEngine(), Config: c, Tasks: train, Tok: tok}
	if !reflect.DeepEqual(must(b.Demonstrations()), old) {
		t.Fatal("BaseRun's default demonstrations differ from the ones played before BaseRun.Env")
	}
	want := modelBytes(t, must(TrainBase(testEngine(), train, tok, c)))
	if got := modelBytes(t, must(b.Train(nil, NewRNG(b.Seed()), 0, nil))); !bytes.Equal(got, want) {
		t.Error("BaseRun.Train differs from TrainBase")
	}
	chapter := BaseRun{Engine: testEngine(), Config: c, Tasks: train, Tok: tok, Env: EnvFactory(chapterBaseEnv)}
	if got := modelBytes(t, must(chapter.Train(nil, NewRNG(chapter.Seed()), 0, nil))); !bytes.Equal(got, want) {
		t.Error("an Env of the chapter's environment trains another agent")
	}
	// Stopped after step 0 with its model and generator state saved, then resumed from them at step 1.
	src := NewSource(b.Seed())
	var saved []byte
	var state []byte
	_, err := b.Train(nil, rand.New(src), 0, func(step int, model *Model, loss float64) error {
		if step == 0 {
			saved, state = modelBytes(t, model), must(src.MarshalBinary())
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("the base training did not stop after step 0: %v", err)
	}
	src = NewSource(0)
	if err := src.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	model := must(gomlxmodel.ReadModel(testEngine(), bytes.NewReader(saved)))
	if got := modelBytes(t, must(b.Train(model, rand.New(src), 1, nil))); !bytes.Equal(got, want) {
		t.Error("the resumed base training differs from TrainBase")
	}
	demos := must(BaseRun{Engine: testEngine(), Config: c, Tasks: train, Tok: tok, Env: EnvFactory(briefBaseEnv)}.Demonstrations())
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
}

// TestBaseRunRejected checks that a base run that cannot be trained is refused by Check, and so by Train and
// TrainBase, before anything is trained, with a message that says what to change.
func TestBaseRunRejected(t *testing.T) {
	tok, train := testSetup(t)
	for _, tc := range []struct {
		name string
		b    BaseRun
		want string
	}{
		{"no tokenizer", BaseRun{Engine: testEngine(), Config: tinyBase(), Tasks: train}, "the tokenizer is nil"},
		{"no tasks", BaseRun{Engine: testEngine(), Config: tinyBase(), Tok: tok}, "no tasks"},
		{"invalid config", BaseRun{Engine: testEngine(), Config: BaseConfig{}, Tasks: train, Tok: tok}, "Steps = 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.b.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check: %v, want an error saying %q", err, tc.want)
			}
			if _, err := tc.b.Train(nil, NewRNG(tc.b.Seed()), 0, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Train: %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if err := (BaseRun{Engine: testEngine(), Config: tinyBase(), Tasks: train, Tok: tok}).Check(); err != nil {
		t.Errorf("a valid base run: %v", err)
	}
}

// TestBaseConfigValidate checks that TrainBase rejects each kind of invalid setting, naming it, before it trains
// anything.
func TestBaseConfigValidate(t *testing.T) {
	tok, train := testSetup(t)
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
		{"tests that do not sum to 1", func(c *BaseConfig) { c.TestsAfterEdit = []float64{0.5, 0.4} }, "TestsAfterEdit"},
		{"no test distribution", func(c *BaseConfig) { c.TestsAfterEdit = nil }, "TestsAfterEdit"},
		{"blind tests out of range", func(c *BaseConfig) { c.BlindTestsAfterEdit = []float64{2, -1} }, "BlindTestsAfterEdit holds 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultBaseConfig()
			tt.edit(&c)
			_, err := TrainBase(testEngine(), train, tok, c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}
