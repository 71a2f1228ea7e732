package main

import (
	"fmt"
	"os"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/internal/recipe"
	"github.com/agentrl-go/agentrl/store"
)

func main() {
	gomlxmodel.SetDecoderSchedule(gomlxmodel.ScheduleSplit)
	c, err := recipe.Parse("x", os.Args[1])
	ck(err)
	s, err := store.Default()
	ck(err)
	ch, err := ch12.SetupIn(s, agentrl.DefaultBaseConfig())
	ck(err)
	ch, err = ch.WithTasks(c.Tasks)
	ck(err)
	ch, err = ch.WithBase(c.Base)
	ck(err)
	cheap := c.RL
	cheap.Reward.StepPenalty = 0.05
	for _, cfg := range []agentrl.RLConfig{c.RL, cheap} {
		run, err := ch.Run(cfg)
		ck(err)
		for _, set := range [][]agentrl.Task{ch.Train, ch.HeldOutTasks} {
			for _, t := range set {
				st, err := agentrl.Evaluate(run.Policy, []agentrl.Task{t}, ch.Tok, 16, agentrl.NewRNG(7), cfg, nil)
				ck(err)
				fmt.Printf("%-11s %-6s %-8s pass %.2f reads %.2f edits %.2f | %s\n", t.Name, t.Op, t.Kind, st.PassRate, st.Reads, st.Edits, t.Issue)
			}
		}
		fmt.Println()
	}
}

func ck(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
