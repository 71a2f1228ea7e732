package main

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// readHabits are a policy's next-call probabilities around a read, each the mean over the contexts probed: the
// first call of an episode, and the call right after a first read.
type readHabits struct {
	First     float64 // a read as the first call
	Again     float64 // a read right after a first read
	Submit    float64 // a submit right after a first read, the program unedited
	Edit      float64 // any edit right after a first read
	RightEdit float64 // the edit the task needs right after a first read: how well the policy maps a read to its fix
}

// habitsOf measures policy's readHabits on n renamings of each of tasks (names drawn from rng) in cfg's
// environment, with agentrl.CallProbs: exact, nothing is sampled.
func habitsOf(policy *gomlxmodel.Model, tok *agentrl.Tokenizer, tasks []agentrl.Task, n int, rng *rand.Rand,
	cfg agentrl.RLConfig) (readHabits, error) {
	if len(tasks) == 0 || n < 1 {
		return readHabits{}, fmt.Errorf("read habits: %d tasks × %d renamings, want at least one of each", len(tasks), n)
	}
	ops := agentrl.Ops()
	read := tok.EncodeCall(agentrl.ToolRead)
	calls := [][]int32{read, tok.EncodeCall(agentrl.ToolSubmit)}
	const firstEdit = 2 // calls[firstEdit+i] edits with ops[i]
	for _, op := range ops {
		calls = append(calls, tok.EncodeCall(agentrl.ToolEdit, op))
	}
	var starts, afterRead [][]int32
	var right []int // the index in calls of each context's right edit
	for _, t := range tasks {
		for range n {
			env, err := agentrl.MakeEnv(cfg)
			if err != nil {
				return readHabits{}, fmt.Errorf("read habits: %w", err)
			}
			e := agentrl.NewEpisode(env, agentrl.RandomizeNames(t, rng), tok, cfg.MaxTurns, agentrl.ContextLen)
			starts = append(starts, slices.Clone(e.IDs))
			e.Act(read, nil)
			afterRead = append(afterRead, slices.Clone(e.IDs))
			right = append(right, firstEdit+slices.Index(ops, t.Op))
		}
	}
	first, err := agentrl.CallProbs(policy, starts, calls[:1], tok.PadID)
	if err != nil {
		return readHabits{}, fmt.Errorf("read habits: %w", err)
	}
	next, err := agentrl.CallProbs(policy, afterRead, calls, tok.PadID)
	if err != nil {
		return readHabits{}, fmt.Errorf("read habits: %w", err)
	}
	var h readHabits
	m := float64(len(starts))
	for i, p := range next {
		h.First += first[i][0] / m
		h.Again += p[0] / m
		h.Submit += p[1] / m
		h.RightEdit += p[right[i]] / m
		for _, q := range p[firstEdit:] {
			h.Edit += q / m
		}
	}
	return h, nil
}

// trainHabits probes policy's next calls around a read on the training tasks, 16 renamings each (seed 7), as
// 12.3's habitsOf does.
func trainHabits(policy *gomlxmodel.Model, tok *agentrl.Tokenizer, train []agentrl.Task) (readHabits, error) {
	return habitsOf(policy, tok, train, 16, agentrl.NewRNG(7), agentrl.DefaultRLConfig())
}

func habitsLine(h readHabits) string {
	return fmt.Sprintf("P(read) first %.3f | after a read: read %.3f, submit %.3f, edit %.3f, the right edit %.3f",
		h.First, h.Again, h.Submit, h.Edit, h.RightEdit)
}
