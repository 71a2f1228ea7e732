package agentrl_test

import (
	"fmt"

	"github.com/agentrl-go/agentrl/agentrl"
)

// firstWords is a context policy of one's own: an observation older than the last one is summarized by its first
// token (a test's "passed", an edit's "edit") instead of being dropped.
type firstWords struct{}

func (firstWords) View(ids []int32, owner []agentrl.Owner, turn []int32, k int) []int32 {
	var view []int32
	for i, id := range ids {
		old := owner[i] == agentrl.OwnerTool && int(turn[i]) < k-1
		if !old || owner[i-1] != agentrl.OwnerTool { // an old observation keeps its first token
			view = append(view, id)
		}
	}
	return view
}

// A context policy of one's own, firstWords: the chapter's samplers and TrainContext take it as they take
// KeepObs(n).
func ExampleContextPolicy() {
	base, tok, train, cfg := tinySetup()
	env, err := agentrl.MakeEnv(cfg)
	if err != nil {
		panic(err)
	}
	task := train[0]
	e := agentrl.NewEpisode(env, task, tok, 6, agentrl.ContextLen)
	for _, call := range [][]string{{agentrl.ToolRead}, {agentrl.ToolEdit, task.Op}, {agentrl.ToolTest}} {
		e.Act(tok.EncodeCall(call[0], call[1:]...), nil)
	}
	for _, p := range []struct {
		name   string
		viewOf agentrl.ContextPolicy
	}{{"full context", agentrl.KeepObs(-1)}, {"keep_obs=1", agentrl.KeepObs(1)}, {"first words", firstWords{}}} {
		fmt.Printf("%-12s sees %d tokens before call 4\n", p.name, len(p.viewOf.View(e.IDs, e.Owner, e.Turn, len(e.Actions))))
	}
	policy, err := base.Clone() // one train_context step (ContextStep) on a copy of base, with firstWords' views
	if err != nil {
		panic(err)
	}
	if _, err := agentrl.ContextStep(policy, train, tok, firstWords{}, cfg, agentrl.NewRNG(cfg.Seed)); err != nil {
		panic(err)
	}
	s, err := agentrl.EvaluateContext(policy, train[:2], tok, firstWords{}, 2, 7, cfg)
	fmt.Println("evaluated", s.Episodes, "episodes, error:", err)
	// Output:
	// full context sees 60 tokens before call 4
	// keep_obs=1   sees 21 tokens before call 4
	// first words  sees 23 tokens before call 4
	// evaluated 4 episodes, error: <nil>
}
