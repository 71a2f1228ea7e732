package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

func must[T any](v T, err error) T { return ch12.Must(v, err) }

func must2[T, U any](t T, u U, err error) (T, U) { return t, ch12.Must(u, err) }

var ch = must(ch12.Setup())

var tok, trainTasks, heldoutTasks, store = ch.Tok, ch.Train, ch.HeldOutTasks, ch.Store

func rlBase() *gomlxmodel.Model { return must(ch.Base()) }

func heldOut(policy *gomlxmodel.Model, cfg agentrl.RLConfig) agentrl.Stats {
	return must(ch.HeldOut(policy, cfg))
}

// SingleTurn is the chapter's single_turn: a copy of t whose prompt includes the source, graded after one call by
// MixedTurnEnv.
func SingleTurn(t agentrl.Task) agentrl.Task {
	t.Issue = t.Issue + "\n" + agentrl.CompactSource(t.Source)
	return t
}

// MixedTurnEnv is the chapter's MixedTurnEnv: EditBudgetEnv that ends SingleTurn tasks after the first call and
// grades them as submitted.
type MixedTurnEnv struct {
	*agentrl.EditBudgetEnv
	Single bool
}

// Reset marks a task as single-turn when its issue has a newline, then delegates.
func (e *MixedTurnEnv) Reset(task agentrl.Task) string {
	e.Single = strings.Contains(task.Issue, "\n")
	return e.EditBudgetEnv.Reset(task)
}

// Step delegates, then ends a single-turn episode after its first call, graded as submitted.
func (e *MixedTurnEnv) Step(action string) (string, float64, bool, agentrl.Info) {
	obs, reward, done, info := e.EditBudgetEnv.Step(action)
	if done || !e.Single {
		return obs, reward, done, info
	}
	e.Done = true
	info = e.FinalInfo(true)
	return obs, e.Reward(info), true, info
}

// Declarations only: this cell computes nothing. Later cells use mixedCfg, mixedFactory, singles, mixedRun, meanRate.
var mixedCfg = agentrl.DefaultRLConfig()

// mixedFactory makes MixedTurnEnv environments with mixedCfg's settings.
func mixedFactory() (agentrl.Env, error) {
	env, err := agentrl.NewEditBudgetEnv(mixedCfg.MaxTurns, must(mixedCfg.Reward.Func()), mixedCfg.MaxEdits)
	return &MixedTurnEnv{EditBudgetEnv: env}, err
}

func singles(tasks []agentrl.Task) []agentrl.Task {
	var out []agentrl.Task
	for _, t := range tasks {
		out = append(out, SingleTurn(t))
	}
	return out
}

// formatPass is a step's batch pass rate on single-turn (formatPass(true)) or multi-turn tasks, NaN when the step
// drew none.
type formatPass bool

// Metric is the step's pass rate on the tasks of its format.
func (single formatPass) Metric(s agentrl.StepBatch) float64 {
	episodes, passed := 0, 0
	for i, t := range s.Trajs {
		if strings.Contains(s.Tasks[i].Issue, "\n") == bool(single) {
			episodes++
			if t.Info.Submitted && t.Info.HiddenPass {
				passed++
			}
		}
	}
	if episodes == 0 {
		return math.NaN()
	}
	return float64(passed) / float64(episodes)
}

// mixedRun trains (or loads) the run of cfg on the training tasks and their single-turn copies, each in its own
// environment (mixedFactory), recording both kinds' pass rates per step.
func mixedRun(cfg agentrl.RLConfig) *agentrl.Run {
	return must(ch.Run(cfg,
		agentrl.InEnv(agentrl.EnvFactory(mixedFactory)), agentrl.OnTasks(append(slices.Clone(trainTasks), singles(trainTasks)...)),
		agentrl.WithMetric("single-turn pass", formatPass(true)), agentrl.WithMetric("multi-turn pass", formatPass(false))))
}

// meanRate is the mean of per-step rates, leaving out the steps that have none (NaN).
func meanRate(rates []float64) float64 {
	sum, n := 0.0, 0
	for _, r := range rates {
		if !math.IsNaN(r) {
			sum, n = sum+r, n+1
		}
	}
	return sum / float64(n)
}

func cell2() {
	fmt.Printf("vocabulary %d tokens | %d training tasks, %d held-out | TinyAgent with %d parameters\n",
		tok.VocabSize(), len(trainTasks), len(heldoutTasks), rlBase().NumParams())
}

func cell5() {
	policies := []struct {
		name   string
		policy *gomlxmodel.Model
	}{
		{"multi-turn only", must(ch.Run(agentrl.DefaultRLConfig())).Policy},
		{"50/50 mixture", mixedRun(mixedCfg).Policy},
	}
	for _, p := range policies {
		var cells []string
		for _, format := range []struct {
			name  string
			tasks []agentrl.Task
		}{{"multi-turn", heldoutTasks}, {"single-turn", singles(heldoutTasks)}} {
			s := must(agentrl.Evaluate(p.policy, format.tasks, tok, 16, agentrl.NewRNG(7), mixedCfg, mixedFactory))
			cells = append(cells, fmt.Sprintf("%s pass %.3f (reads %.2f)", format.name, s.PassRate, s.Reads))
		}
		fmt.Printf("%-16s %s\n", p.name, strings.Join(cells, " | "))
	}
	metrics := mixedRun(mixedCfg).Metrics
	fmt.Printf("per-format batch pass, steps 30-39: single-turn %.2f | multi-turn %.2f\n",
		meanRate(metrics["single-turn pass"][30:40]), meanRate(metrics["multi-turn pass"][30:40]))
}

func cell6() {
	half := []agentrl.Task{}
	for i := 0; i < len(trainTasks); i += 5 {
		half = append(half, trainTasks[i])
	}
	for i := 1; i < len(trainTasks); i += 5 {
		half = append(half, SingleTurn(trainTasks[i]))
	}
	kept := must(agentrl.SampleGroups(mixedRun(mixedCfg).Policy, mixedFactory, half, tok, mixedCfg, agentrl.NewRNG(3)))
	single := make([]bool, len(kept)) // a newline among the prompt tokens marks a single-turn task
	masks := make([][]float32, len(kept))
	var singleEpisodes, singleTokens, allTokens float64
	for k, t := range kept {
		for i, id := range t.IDs {
			single[k] = single[k] || (t.Owner[i] == agentrl.OwnerPrompt && id == tok.NewlineID)
		}
		masks[k] = t.ActionMask
		for _, m := range t.ActionMask {
			allTokens += float64(m)
			if single[k] {
				singleTokens += float64(m)
			}
		}
		if single[k] {
			singleEpisodes++
		}
	}
	// shareOf is the single-turn episodes' share of the loss under an aggregation: the weights the update gives.
	shareOf := func(aggregation gomlxmodel.Aggregation) float64 {
		total := 0.0
		for k, w := range must(gomlxmodel.AggregationWeights(masks, aggregation)) {
			for _, x := range w {
				if single[k] {
					total += float64(x)
				}
			}
		}
		return total
	}
	fmt.Printf("single-turn share of episodes %.2f | of loss weight: token_mean %.2f, seq_mean %.2f\n",
		singleEpisodes/float64(len(kept)), shareOf(agentrl.TokenMean), shareOf(agentrl.SeqMeanTokenMean))
	fmt.Printf("policy tokens of these episodes: %.0f single-turn of %.0f\n", singleTokens, allTokens)
}

func main() {}
