package main

import (
	"fmt"
	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"slices"
	"strings"
)

// Link this notebook to the repository's Go module: GONB_DIR is the notebook's folder. Imports resolve
// in the workspace (the repository's go.mod pins every version), so no `go get` is needed.

func must[T any](v T, err error) T               { return ch12.Must(v, err) }
func must2[T, U any](t T, u U, err error) (T, U) { return t, ch12.Must(u, err) }

var ch = must(ch12.Setup()) // the tokenizer, the tasks and the result store; nothing is trained or loaded yet
var tok, trainTasks, heldoutTasks, store = ch.Tok, ch.Train, ch.HeldOutTasks, ch.Store

func rlBase() *gomlxmodel.Model { return must(ch.Base()) } // the RL base agent, made or loaded on first use
func heldOut(policy *gomlxmodel.Model, cfg agentrl.RLConfig) agentrl.Stats {
	return must(ch.HeldOut(policy, cfg))
}

// EarlyStopEnv is the chapter's EarlyStopEnv: an EditBudgetEnv whose episode stops without a submission once
// MaxInvalid calls were malformed or unknown.
type EarlyStopEnv struct {
	*agentrl.EditBudgetEnv
	MaxInvalid int
}

// Step delegates, then ends the episode with stop "invalid" once NInvalid reaches MaxInvalid.
func (e *EarlyStopEnv) Step(action string) (string, float64, bool, agentrl.Info) {
	obs, reward, done, info := e.EditBudgetEnv.Step(action)
	if done || e.NInvalid < e.MaxInvalid {
		return obs, reward, done, info
	}
	e.Done = true
	info = e.FinalInfo(false)
	info.Stop = agentrl.StopInvalid
	return obs, e.Reward(info), true, info
}

// earlyStop makes the early-termination environment of the comparison above: one malformed call ends the episode.
func earlyStop() (agentrl.Env, error) {
	env, err := agentrl.NewEditBudgetEnv(6, must(agentrl.DefaultRLConfig().Reward.Func()), 1)
	return &EarlyStopEnv{EditBudgetEnv: env, MaxInvalid: 1}, err
}

// policyTokens is the mean number of policy tokens per episode of the base agent on the training tasks, 8 episodes
// per task, in the environments that factory makes, sampled with seed.
func policyTokens(factory agentrl.EnvFactory, seed uint64) float64 {
	trajs := must(agentrl.SampleGroups(rlBase(), factory, trainTasks, tok, agentrl.DefaultRLConfig(), agentrl.NewRNG(seed)))
	total := 0.0
	for _, t := range trajs {
		for _, m := range t.ActionMask {
			total += float64(m)
		}
	}
	return total / float64(len(trajs))
}

// malformedPerTurn is the share of malformed calls among all the calls of the episodes logged in steps.
func malformedPerTurn(steps [][]agentrl.Info) float64 {
	return agentrl.InfoStats(slices.Concat(steps...)).InvalidPerTurn
}

func main() {
	priced := agentrl.DefaultRLConfig()
	priced.Reward.InvalidPenalty = 0.1
	fmt.Printf("%-16s | malformed calls per turn in training, by 5-step window | held-out: malformed per turn, pass\n",
		"a malformed call")
	for _, a := range []struct {
		name    string
		cfg     agentrl.RLConfig
		envName string
		factory agentrl.EnvFactory
	}{
		{"costs a turn", agentrl.DefaultRLConfig(), "", nil},
		{"also costs 0.1", priced, "", nil},
		{"ends the episode", agentrl.DefaultRLConfig(), "early_stop_1", earlyStop},
	} {
		run := must(agentrl.TrainedRun(store, rlBase(), tok, trainTasks, a.cfg, 40, a.envName, a.factory))
		steps := must(agentrl.LogByStep(run.History, run.Log))
		fmt.Printf("%-16s |", a.name)
		for w := 0; w < len(steps); w += 5 {
			fmt.Printf(" %.3f", malformedPerTurn(steps[w:w+5]))
		}
		s := heldOut(run.Policy, agentrl.DefaultRLConfig())
		fmt.Printf(" | %.3f %.3f\n", s.InvalidPerTurn, s.PassRate)
	}
}
