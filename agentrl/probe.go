package agentrl

// Probing a policy: instead of sampling what it does next, ask how likely each candidate call is.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// CallProbs returns, for each context in views, the probability that policy's next call (at temperature 1) is
// each of calls: probs[i][c] = p(calls[c] | views[i]), the product of the call's token probabilities. The calls
// are token sequences such as Tokenizer.EncodeCall gives, closing token included, so the probabilities of
// distinct well-formed calls add up to at most 1 and the rest is the chance of a malformed or other call. All
// views × calls rows are scored in one forward pass.
func CallProbs(policy *gomlxmodel.Model, views, calls [][]int32, padID int32) ([][]float64, error) {
	if len(views) == 0 || len(calls) == 0 {
		return nil, fmt.Errorf("call probs: %d views and %d calls, want at least one of each", len(views), len(calls))
	}
	var rows [][]int32
	for i, view := range views {
		if len(view) == 0 {
			return nil, fmt.Errorf("call probs: view %d is empty", i)
		}
		for c, call := range calls {
			if len(call) == 0 {
				return nil, fmt.Errorf("call probs: call %d is empty", c)
			}
			rows = append(rows, append(append(make([]int32, 0, len(view)+len(call)), view...), call...))
		}
	}
	T := 0
	for _, r := range rows {
		T = max(T, len(r))
	}
	if maxLen := policy.Config().MaxLen; T > maxLen {
		return nil, fmt.Errorf("call probs: a view and call take %d tokens, more than the context (%d)", T, maxLen)
	}
	logp, err := policy.SequenceLogProbs(PadRows(rows, T, padID), len(rows), T)
	if err != nil {
		return nil, fmt.Errorf("call probs: %w", err)
	}
	probs := make([][]float64, len(views))
	for i, view := range views {
		probs[i] = make([]float64, len(calls))
		for c, call := range calls {
			row := i*len(calls) + c
			sum := 0.0
			for j := len(view); j < len(view)+len(call); j++ { // position j-1 predicts token j
				sum += float64(logp[row*(T-1)+j-1])
			}
			probs[i][c] = math.Exp(sum)
		}
	}
	return probs, nil
}

// ReadHabits are a policy's next-call probabilities around a read, each the mean over the contexts probed: the
// first call of an episode, and the call right after a first read.
type ReadHabits struct {
	First     float64 // a read as the first call
	Again     float64 // a read right after a first read
	Submit    float64 // a submit right after a first read, the program unedited
	Edit      float64 // any edit right after a first read
	RightEdit float64 // the edit the task needs right after a first read: how well the policy maps a read to its fix
}

// ReadHabitsOf measures policy's ReadHabits on n renamings of each of tasks (names drawn from rng) in cfg's
// environment, with CallProbs: exact, nothing is sampled.
func ReadHabitsOf(policy *gomlxmodel.Model, tok *Tokenizer, tasks []Task, n int, rng *rand.Rand, cfg RLConfig) (ReadHabits, error) {
	if len(tasks) == 0 || n < 1 {
		return ReadHabits{}, fmt.Errorf("read habits: %d tasks × %d renamings, want at least one of each", len(tasks), n)
	}
	read := tok.EncodeCall(ToolRead)
	calls := [][]int32{read, tok.EncodeCall(ToolSubmit)}
	const firstEdit = 2 // calls[firstEdit+i] edits with op i of Ops
	for _, op := range repairOps {
		calls = append(calls, tok.EncodeCall(ToolEdit, op))
	}
	var starts, afterRead [][]int32
	var right []int // the index in calls of each context's right edit
	for _, t := range tasks {
		for range n {
			env, err := MakeEnv(cfg)
			if err != nil {
				return ReadHabits{}, fmt.Errorf("read habits: %w", err)
			}
			e := NewEpisode(env, RandomizeNames(t, rng), tok, cfg.MaxTurns, ContextLen)
			starts = append(starts, slices.Clone(e.IDs))
			e.Act(read, nil)
			afterRead = append(afterRead, slices.Clone(e.IDs))
			right = append(right, firstEdit+slices.Index(repairOps[:], t.Op))
		}
	}
	first, err := CallProbs(policy, starts, calls[:1], tok.PadID)
	if err != nil {
		return ReadHabits{}, fmt.Errorf("read habits: %w", err)
	}
	next, err := CallProbs(policy, afterRead, calls, tok.PadID)
	if err != nil {
		return ReadHabits{}, fmt.Errorf("read habits: %w", err)
	}
	var h ReadHabits
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
