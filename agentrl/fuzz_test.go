package agentrl

import (
	"strings"
	"testing"
)

// FuzzStep drives the envs with arbitrary action texts (actions separated by "|") and an Episode with arbitrary
// token ids: nothing may panic, every call costs exactly one turn, and the episode keeps its invariants.
// Run with: go test ./agentrl/ -run '^$' -fuzz FuzzStep -fuzztime 30s
func FuzzStep(f *testing.F) {
	for _, s := range []string{
		"<call> read </call>|<call> edit fix_init </call>|<call> submit </call>",
		"<call> edit </call>|<call> edit fix_x </call>|<call> run </call>|<call> read x </call>",
		"<call>|</call>|<call> </call>|<call> <call> test </call> </call>",
		"\n\n|<obs> <pad> <nl>|" + strings.Repeat("<call> test ", 30),
		"<call> edit fix_off_by_one </call>|<call> edit fix_off_by_one </call>|<call> test </call>",
	} {
		f.Add(s, []byte{3, 9, 4})
	}
	tasks := mustTasks(f, SplitAll)
	tok := gymTok(f)
	f.Fuzz(func(t *testing.T, actions string, ids []byte) {
		task := tasks[len(actions)%len(tasks)]
		if len(ids) > 0 && ids[0]%2 == 1 {
			task = SingleTurn(task)
		}
		base := mustEnv(t, 6, 1)
		es, _ := NewEarlyStopEnv(6, nil, 1, 2)
		mt, _ := NewMixedTurnEnv(6, nil, 1)
		for _, env := range []Env{base, es, mt} {
			env.Reset(task)
			for i, a := range strings.Split(actions, "|") {
				if i > 10 {
					break
				}
				_, reward, done, info := env.Step(a)
				if done {
					if info.NTurns != i+1 || info.NTurns > 6 || info.NInvalid > info.NTurns || info.Stop == "" || (reward != 0 && reward != 1) {
						t.Fatalf("terminal info %+v reward %v", info, reward)
					}
					break
				}
			}
		}
		// token-level: calls cut from the ids as a sampler would (at </call> or MaxCallTokens)
		e := NewEpisode(mustEnv(t, 24, 1), task, tok, 24, ContextLen)
		var call []int32
		for _, b := range ids {
			if e.Done {
				break
			}
			id := int32(b) % int32(tok.VocabSize()+2) // a few ids outside the vocabulary too
			call = append(call, id)
			if id == tok.CallEndID || len(call) == MaxCallTokens {
				e.Act(call, nil)
				call = nil
			}
		}
		if len(e.IDs) > ContextLen || len(e.IDs) != len(e.Owner) || len(e.IDs) != len(e.Turn) {
			t.Fatalf("episode of %d tokens, %d owners, %d turns", len(e.IDs), len(e.Owner), len(e.Turn))
		}
		tr := MakeTrajectory(e)
		for j := range tr.ActionMask {
			if (tr.ActionMask[j] == 1) != (tr.Owner[j+1] == OwnerPolicy) {
				t.Fatal("mask differs from policy owner")
			}
		}
	})
}
