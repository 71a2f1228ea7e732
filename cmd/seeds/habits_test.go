package main

import (
	"math"
	"slices"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// TestHabitsOf checks habitsOf against agentrl.CallProbs on the contexts it names, built here by playing the
// episode: one renaming of one task per op, so the right edit differs from context to context.
func TestHabitsOf(t *testing.T) {
	all, err := agentrl.MakeTasks(agentrl.SplitAll)
	if err != nil {
		t.Fatal(err)
	}
	train, err := agentrl.MakeTasks(agentrl.SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	tok := agentrl.BuildTokenizer(all)
	eng, err := gomlxmodel.NewEngine(gomlxmodel.EnvOptions())
	if err != nil {
		t.Fatal(err)
	}
	policy, err := gomlxmodel.New(eng, gomlxmodel.Config{Vocab: tok.VocabSize(), MaxLen: agentrl.ContextLen, DModel: 16, Heads: 2, Layers: 1, MLP: 32}, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := agentrl.DefaultRLConfig()
	var tasks []agentrl.Task
	for _, op := range agentrl.Ops() {
		tasks = append(tasks, train[slices.IndexFunc(train, func(t agentrl.Task) bool { return t.Op == op })])
	}
	got, err := habitsOf(policy, tok, tasks, 1, agentrl.NewRNG(5), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want readHabits
	rng, read, submit := agentrl.NewRNG(5), tok.EncodeCall(agentrl.ToolRead), tok.EncodeCall(agentrl.ToolSubmit)
	for _, task := range tasks {
		env, err := agentrl.MakeEnv(cfg)
		if err != nil {
			t.Fatal(err)
		}
		e := agentrl.NewEpisode(env, agentrl.RandomizeNames(task, rng), tok, cfg.MaxTurns, agentrl.ContextLen)
		start := slices.Clone(e.IDs)
		e.Act(read, nil)
		edits := [][]int32{tok.EncodeCall(agentrl.ToolEdit, task.Op)}
		for _, op := range agentrl.Ops() {
			if op != task.Op {
				edits = append(edits, tok.EncodeCall(agentrl.ToolEdit, op))
			}
		}
		p0, err := agentrl.CallProbs(policy, [][]int32{start}, [][]int32{read}, tok.PadID)
		if err != nil {
			t.Fatal(err)
		}
		p1, err := agentrl.CallProbs(policy, [][]int32{e.IDs}, append([][]int32{read, submit}, edits...), tok.PadID)
		if err != nil {
			t.Fatal(err)
		}
		n := float64(len(tasks))
		want.First += p0[0][0] / n
		want.Again += p1[0][0] / n
		want.Submit += p1[0][1] / n
		want.RightEdit += p1[0][2] / n
		for _, p := range p1[0][2:] {
			want.Edit += p / n
		}
	}
	for _, f := range []struct {
		name      string
		got, want float64
	}{{"First", got.First, want.First}, {"Again", got.Again, want.Again}, {"Submit", got.Submit, want.Submit},
		{"Edit", got.Edit, want.Edit}, {"RightEdit", got.RightEdit, want.RightEdit}} {
		if math.Abs(f.got-f.want) > 1e-6 || !(f.got > 0) {
			t.Errorf("%s = %.6f, want %.6f (> 0)", f.name, f.got, f.want)
		}
	}
	if _, err := habitsOf(policy, tok, nil, 1, agentrl.NewRNG(5), cfg); err == nil {
		t.Error("no tasks: no error")
	}
}
