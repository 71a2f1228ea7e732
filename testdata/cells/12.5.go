package main

import (
	"fmt"
	"io"
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

// EarlyStop makes Cfg's environments (MakeEnv's) as EarlyStopEnv: an episode stops without a submission at its
// MaxInvalid-th malformed or unknown call. As a value it names its environments by both fields.
type EarlyStop struct {
	Cfg        agentrl.RLConfig
	MaxInvalid int
}

// NewEnv makes one environment.
func (e EarlyStop) NewEnv() (agentrl.Env, error) {
	if e.MaxInvalid < 1 {
		return nil, fmt.Errorf("early stop env: max invalid %d < 1", e.MaxInvalid)
	}
	env, err := agentrl.MakeEnv(e.Cfg)
	if err != nil {
		return nil, err
	}
	return &EarlyStopEnv{EditBudgetEnv: env.(*agentrl.EditBudgetEnv), MaxInvalid: e.MaxInvalid}, nil
}

// earlyStop makes the early-termination environments of the comparison above: one malformed call ends the episode.
var earlyStop = EarlyStop{Cfg: agentrl.DefaultRLConfig(), MaxInvalid: 1}

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

// Declarations only: this cell computes nothing. Later cells use malformedPerTurn.
// malformedPerTurn is the share of malformed calls among all the calls of the episodes logged in steps.
func malformedPerTurn(steps [][]agentrl.Info) float64 {
	return agentrl.InfoStats(slices.Concat(steps...)).InvalidPerTurn
}

func cell2() {
	fmt.Printf("vocabulary %d tokens | %d training tasks, %d held-out | TinyAgent with %d parameters\n",
		tok.VocabSize(), len(trainTasks), len(heldoutTasks), rlBase().NumParams())
}

func cell4() {
	cfg := agentrl.DefaultRLConfig()
	reward := must(cfg.Reward.Func())
	factories := []struct {
		name    string
		factory agentrl.EnvFactory
	}{
		{"error observation", agentrl.EnvFactoryOf(cfg)},
		{"early stop", func() (agentrl.Env, error) {
			env, err := agentrl.NewEditBudgetEnv(6, reward, 1)
			return &EarlyStopEnv{EditBudgetEnv: env, MaxInvalid: 1}, err
		}},
	}
	for _, f := range factories {
		trajs := must(agentrl.SampleGroups(rlBase(), f.factory, trainTasks, tok, cfg, agentrl.NewRNG(2)))
		var erred, erredReward, reward, policyTokens float64
		for _, t := range trajs {
			if t.Info.NInvalid > 0 {
				erred++
				erredReward += t.Reward
			}
			reward += t.Reward
			for _, m := range t.ActionMask {
				policyTokens += float64(m)
			}
		}
		n := float64(len(trajs))
		fmt.Printf("%-18s episodes with an error %.3f | their pass rate %.3f | overall pass %.3f | policy tokens per episode %.1f\n",
			f.name, erred/n, erredReward/max(erred, 1), reward/n, policyTokens/n)
	}
}

func cell6() {
	ch12.Check(ch.Printed("12.5/sampling seeds", func(w io.Writer) error { // stored, keyed by this code
		var ratios []string
		saves := 0
		for seed := range uint64(10) {
			r := policyTokens(earlyStop.NewEnv, seed) / policyTokens(agentrl.EnvFactoryOf(agentrl.DefaultRLConfig()), seed)
			if r < 1 {
				saves++
			}
			ratios = append(ratios, fmt.Sprintf("%.3f", r))
		}
		_, err := fmt.Fprintf(w, "sampling seeds 0-9, policy tokens early stop / error observation: %s | early stop saves tokens in %d of 10\n",
			strings.Join(ratios, " "), saves)
		return err
	}))
}

func cell8() {
	run := must(ch.Run(agentrl.DefaultRLConfig()))
	steps := must(agentrl.LogByStep(run.History, run.Log))
	for _, window := range [][2]int{{0, 5}, {35, 40}} {
		fmt.Printf("default run, steps %d-%d: malformed calls per turn %.4f\n", window[0], window[1]-1, malformedPerTurn(steps[window[0]:window[1]]))
	}
}

func cell9() {
	cfg := agentrl.DefaultRLConfig()
	run := must(ch.Run(cfg))
	fmt.Print("default run, steps 0-9: malformed calls per turn")
	for _, h := range run.History[:10] {
		fmt.Printf(" %.3f", h.InvalidPerTurn)
	}
	fmt.Print(" | reads per episode")
	for _, h := range run.History[:10] {
		fmt.Printf(" %.2f", h.Reads)
	}
	fmt.Println()
}

func cell10() {
	// The probe trains five steps again and samples 2,240 episodes; its report is stored (ch.Printed), keyed by this code.
	ch12.Check(ch.Printed("12.5/put back", func(w io.Writer) error {
		cfg := agentrl.DefaultRLConfig()
		run := must(ch.Run(cfg))

		// The first five steps again, from a fresh copy of the base agent.
		early := must(rlBase().Clone())
		history := must(agentrl.TrainRL(early, trainTasks, tok, cfg, 5, nil))
		same := true
		for i, h := range history {
			same = same && h.Stats == run.History[i].Stats
		}
		fmt.Fprintln(w, "the five steps repeat the stored run's:", same)

		// named returns a picker of the parameters whose names end in one of ends ("" picks all).
		named := func(ends ...string) func(string) bool {
			return func(name string) bool {
				return slices.ContainsFunc(ends, func(end string) bool { return strings.HasSuffix(name, end) })
			}
		}
		probe := cfg
		probe.GroupSize = 16
		fmt.Fprintln(w, "the policy after steps 0-4, with one group of base weights put back (20 tasks x 16 episodes each)")
		fmt.Fprintf(w, "%-19s | %s | %s\n", "put back", "malformed calls per turn", "reads per episode")
		for _, group := range []struct {
			name string
			pick func(string) bool
		}{
			{"none", named()},
			{"embeddings", named("tok", "pos")},
			{"layer norms", named("ln1_g", "ln1_b", "ln2_g", "ln2_b", "lnf_g", "lnf_b")},
			{"attention", named("wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo")},
			{"MLPs", named("w1", "b1", "w2", "b2")},
			{"output head", named("head_w", "head_b")},
			{"all: the base agent", named("")},
		} {
			policy := must(early.Clone())
			must(policy.CopyParams(rlBase(), group.pick))
			s := agentrl.BehaviorStats(must(agentrl.SampleGroups(policy, nil, trainTasks, tok, probe, agentrl.NewRNG(11))))
			fmt.Fprintf(w, "%-19s | %24.3f | %17.2f\n", group.name, s.InvalidPerTurn, s.Reads)
		}
		return nil
	}))
}

func cell11() {
	priced := agentrl.DefaultRLConfig()
	priced.Reward.InvalidPenalty = 0.1
	fmt.Printf("%-16s | malformed calls per turn in training, by 5-step window | held-out: malformed per turn, pass\n",
		"a malformed call")
	for _, a := range []struct {
		name string
		cfg  agentrl.RLConfig
		opts []agentrl.RunOption
	}{
		{"costs a turn", agentrl.DefaultRLConfig(), nil},
		{"also costs 0.1", priced, nil},
		{"ends the episode", agentrl.DefaultRLConfig(), []agentrl.RunOption{agentrl.InEnv(earlyStop)}},
	} {
		run := must(ch.Run(a.cfg, a.opts...))
		steps := must(agentrl.LogByStep(run.History, run.Log))
		fmt.Printf("%-16s |", a.name)
		for w := 0; w < len(steps); w += 5 {
			fmt.Printf(" %.3f", malformedPerTurn(steps[w:w+5]))
		}
		s := heldOut(run.Policy, agentrl.DefaultRLConfig())
		fmt.Printf(" | %.3f %.3f\n", s.InvalidPerTurn, s.PassRate)
	}
}

func main() {}
