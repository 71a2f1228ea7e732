package agentrl_test

import (
	"fmt"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// quietEdits is the chapter's environment with an applied edit's observation cut to "edit applied": the agent no
// longer sees the line its edit changed.
type quietEdits struct{ agentrl.Env }

func (q quietEdits) Step(action string) (string, float64, bool, agentrl.Info) {
	obs, reward, done, info := q.Env.Step(action)
	if strings.HasPrefix(obs, agentrl.ObsEdited) {
		obs = agentrl.ObsEdited
	}
	return obs, reward, done, info
}

// A base agent that has seen what a reader's environment shows: its demonstrations are played there.
func ExampleBaseRun() {
	all, _ := agentrl.MakeTasks(agentrl.SplitAll)
	train, _ := agentrl.MakeTasks(agentrl.SplitTrain)
	tok := agentrl.BuildTokenizer(all)
	c := agentrl.DefaultBaseConfig()
	c.Demos, c.MappingDemos, c.Steps, c.BatchSize = 16, 8, 2, 4 // a tiny schedule, for the example
	quiet := agentrl.EnvFactory(func() (agentrl.Env, error) {
		reward, err := agentrl.MakeReward(agentrl.RewardHidden, agentrl.RewardOptions{})
		if err != nil {
			return nil, err
		}
		env, err := agentrl.NewEditBudgetEnv(c.MaxTurns, reward, 1)
		return quietEdits{env}, err
	})
	showLines := func(env agentrl.EnvMaker) int {
		demos, err := agentrl.BaseRun{Config: c, Tasks: train, Tok: tok, Env: env}.Demonstrations()
		if err != nil {
			panic(err)
		}
		n := 0
		for _, d := range demos {
			if strings.Contains(tok.Decode(d.IDs), agentrl.ObsEdited+" :") {
				n++
			}
		}
		return n
	}
	fmt.Println("demonstrations that show an edited line:", showLines(nil), "in the chapter's environment,",
		showLines(quiet), "in the reader's")
	eng, err := gomlxmodel.NewEngine(gomlxmodel.EnvOptions()) // what the models compute on
	if err != nil {
		panic(err)
	}
	b := agentrl.BaseRun{Engine: eng, Config: c, Tasks: train, Tok: tok, Env: quiet}
	base, err := b.Train(nil, agentrl.NewRNG(b.Seed()), 0, nil)
	fmt.Println("base agent trained:", base != nil, "error:", err)
	// Output:
	// demonstrations that show an edited line: 24 in the chapter's environment, 0 in the reader's
	// base agent trained: true error: <nil>
}
