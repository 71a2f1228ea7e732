package agentrl_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
)

// quietTests is the chapter's environment with a test's observation cut to "passed k of n": the agent no longer
// sees the input that failed.
type quietTests struct{ agentrl.Env }

func (q quietTests) Step(action string) (string, float64, bool, agentrl.Info) {
	obs, reward, done, info := q.Env.Step(action)
	if before, _, found := strings.Cut(obs, " failed on"); found {
		obs = before
	}
	return obs, reward, done, info
}

// A base agent that has seen what a reader's environment shows: its demonstrations are played there.
func ExampleWithBaseEnv() {
	all, _ := agentrl.MakeTasks(agentrl.SplitAll)
	train, _ := agentrl.MakeTasks(agentrl.SplitTrain)
	tok := agentrl.BuildTokenizer(all)
	dir, _ := os.MkdirTemp("", "agentrl-example-")
	defer os.RemoveAll(dir)
	store, err := agentrl.OpenStore(dir)
	if err != nil {
		panic(err)
	}
	c := agentrl.DefaultBaseConfig()
	c.Demos, c.MappingDemos, c.Steps, c.BatchSize = 16, 8, 2, 4 // a tiny schedule, for the example
	quiet := func() (agentrl.Env, error) {
		reward, err := agentrl.MakeReward(agentrl.RewardHidden, agentrl.RewardOptions{})
		if err != nil {
			return nil, err
		}
		env, err := agentrl.NewEditBudgetEnv(c.MaxTurns, reward, 1)
		return quietTests{env}, err
	}
	showLines := func(opts ...agentrl.BaseOption) int {
		demos, err := c.Demonstrations(train, tok, opts...)
		if err != nil {
			panic(err)
		}
		n := 0
		for _, d := range demos {
			if strings.Contains(tok.Decode(d.IDs), "failed on") {
				n++
			}
		}
		return n
	}
	fmt.Println("demonstrations that name a failing input:", showLines(), "in the chapter's environment,",
		showLines(agentrl.WithBaseEnv(quiet)), "in the reader's")
	base, err := agentrl.BaseFrom(store, tok, c, agentrl.WithBaseEnv(quiet))
	fmt.Println("base agent trained:", base != nil, "error:", err)
	// Output:
	// demonstrations that name a failing input: 10 in the chapter's environment, 0 in the reader's
	// base agent trained: true error: <nil>
}
