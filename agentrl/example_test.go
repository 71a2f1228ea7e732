package agentrl_test

import (
	"fmt"

	"github.com/agentrl-go/agentrl/agentrl"
)

// An oracle episode on the first training task: read the source, infer the op from the observation, edit, test,
// submit.
func ExampleEpisode() {
	all, _ := agentrl.MakeTasks(agentrl.SplitAll)
	tok := agentrl.BuildTokenizer(all)
	task := all[0]
	env, _ := agentrl.NewEditBudgetEnv(6, nil, 1)
	e := agentrl.NewEpisode(env, task, tok, 6, agentrl.ContextLen)
	e.Act(tok.EncodeCall(agentrl.ToolRead), nil)
	op, _ := agentrl.InferOp(e.LastObs())
	e.Act(tok.EncodeCall(agentrl.ToolEdit, op), nil)
	e.Act(tok.EncodeCall(agentrl.ToolTest), nil)
	e.Act(tok.EncodeCall(agentrl.ToolSubmit), nil)
	fmt.Println(e.Transcript())
	fmt.Println(len(e.IDs), "tokens")
	// Output:
	// prompt | <bos> ys should count items above 1
	// call 0 | <call> read </call>
	// obs 0  | <obs> def ys ( probe ) : <nl> arr = 0 <nl> for metric in probe : <nl> if metric >= 1 : <nl> arr = arr + 1 <nl> return arr </obs>
	// call 1 | <call> edit fix_comparison </call>
	// obs 1  | <obs> edit applied : if metric > 1 : </obs>
	// call 2 | <call> test </call>
	// obs 2  | <obs> passed 3 of 3 </obs>
	// call 3 | <call> submit </call>
	// reward 1 | submitted true | hidden pass true | turns 4 | invalid 0 | stop submitted
	// 69 tokens
}
