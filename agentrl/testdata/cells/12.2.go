package main

import (
	"fmt"
	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/chart"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/janpfeifer/gonb/gonbui"
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

// PerCallRewards is per_call_rewards: token rewards [B][T-1] with -stepPenalty on the last token of every call
// and the hidden-test verdict on the episode's last policy token.
func PerCallRewards(trajs []agentrl.Trajectory, mask [][]float32, stepPenalty float64) [][]float32 {
	verdict := make([]float32, len(trajs))
	for b, t := range trajs {
		if t.Info.Submitted && t.Info.HiddenPass {
			verdict[b] = 1
		}
	}
	rewards := agentrl.OutcomeRewards(verdict, mask)
	for b, m := range mask {
		for j := range m {
			if m[j] == 1 && (j+1 == len(m) || m[j+1] == 0) { // a call ends here
				rewards[b][j] -= float32(stepPenalty)
			}
		}
	}
	return rewards
}

// MaskedWhiten is masked_whiten: x normalized to mean 0 and standard deviation 1 over the positions where mask
// is 1 (one mean and std for the whole batch), and zero elsewhere.
func MaskedWhiten(x, mask [][]float32) [][]float32 {
	mean := agentrl.MaskedMean(x, mask)
	sq := agentrl.Zeros(len(x), len(x[0]))
	for b := range x {
		for j := range x[b] {
			sq[b][j] = float32((float64(x[b][j]) - mean) * (float64(x[b][j]) - mean))
		}
	}
	std := math.Sqrt(agentrl.MaskedMean(sq, mask))
	out := agentrl.Zeros(len(x), len(x[0]))
	for b := range x {
		for j := range x[b] {
			out[b][j] = float32((float64(x[b][j])-mean)/(std+1e-6)) * mask[b][j]
		}
	}
	return out
}

const stepCost = 0.05

var costCfg = func() agentrl.RLConfig {
	cfg := agentrl.DefaultRLConfig()
	cfg.Reward.StepPenalty = stepCost
	return cfg
}()

// WarmCritic is 12.2's critic warm-up: a critic built on a copy of base's trunk, regressed for 60 Adam steps
// (lr 1e-3, 64 episodes drawn with replacement) on the returns-to-go of base-agent episodes (three
// agentrl.SampleGroups batches over tasks, seeds 0-2) under cfg's step penalty. Its Adam state is then dropped, so each
// arm that copies it starts a fresh optimizer, as the book's vopt does.
func WarmCritic(base *gomlxmodel.Model, tasks []agentrl.Task, tok *agentrl.Tokenizer, cfg agentrl.RLConfig) (*gomlxmodel.Critic, error) {
	var warmTrajs []agentrl.Trajectory
	for seed := range 3 {
		trajs, err := agentrl.SampleGroups(base, nil, tasks, tok, cfg, agentrl.NewRNG(uint64(seed)))
		if err != nil {
			return nil, fmt.Errorf("critic warm-up: %w", err)
		}
		warmTrajs = append(warmTrajs, trajs...)
	}
	warm := agentrl.Collate(warmTrajs, tok.PadID)
	warmReturns := agentrl.ReturnsToGo(PerCallRewards(warmTrajs, warm.Mask(), cfg.Reward.StepPenalty), warm.Mask())
	critic, err := gomlxmodel.NewCritic(base, 1)
	if err != nil {
		return nil, err
	}
	gen := agentrl.NewRNG(1)
	for range 60 {
		idx := make([]int, 64)
		for i := range idx {
			idx[i] = gen.IntN(len(warmTrajs))
		}
		returns := agentrl.SelectRows(warmReturns, idx)
		if _, err := agentrl.ValueStep(critic, warm.Select(idx), returns, returns, 0, 1e-3); err != nil {
			return nil, fmt.Errorf("critic warm-up: %w", err)
		}
	}
	critic.ResetOptimizer() // the warm-up's Adam stays behind: each arm's critic starts a fresh one
	return critic, nil
}

func baseID() string { return must(agentrl.Fingerprint(rlBase())) }

func warmedCritic() *gomlxmodel.Critic {
	return must(agentrl.Cached(store, agentrl.Key("12.2/critic", baseID(), costCfg, must(agentrl.CodeHash("warmedCritic"))), agentrl.CriticCodec(),
		func() (*gomlxmodel.Critic, error) { return WarmCritic(rlBase(), trainTasks, tok, costCfg) }))
}

// TrainCredit is train_credit: GRPO's loop on a copy of base with token-level ("token") or turn-level ("turn")
// GAE advantages from a copy of critic, per-call rewards (cfg's step penalty on every call, the verdict on the
// last), whitened over the batch's policy tokens; the critic takes one regression step (lr 1e-3) per training
// step on the batch's returns-to-go. The run's generator is seeded with cfg.Seed.
func TrainCredit(base *gomlxmodel.Model, critic *gomlxmodel.Critic, tasks []agentrl.Task, tok *agentrl.Tokenizer, cfg agentrl.RLConfig,
	scheme string, steps int, lambda float64) (*agentrl.Run, error) {
	if scheme != "token" && scheme != "turn" {
		return nil, fmt.Errorf("train_credit: scheme %q, want \"token\" or \"turn\"", scheme)
	}
	if !(lambda >= 0 && lambda <= 1) {
		return nil, fmt.Errorf("train_credit: lambda %g, want a number in [0, 1]", lambda)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	if critic, err = critic.Clone(); err != nil {
		return nil, err
	}
	rng, prog := agentrl.NewRNG(cfg.Seed), agentrl.NewProgress("train_credit "+scheme, steps)
	var history []agentrl.StepStats
	for step := range steps {
		trajs, _, err := agentrl.SampleStep(policy, nil, tasks, tok, cfg, rng)
		if err != nil {
			return nil, fmt.Errorf("train_credit step %d: %w", step, err)
		}
		batch := agentrl.Collate(trajs, tok.PadID)
		mask, rewards := batch.Mask(), PerCallRewards(trajs, batch.Mask(), cfg.Reward.StepPenalty)
		values, err := agentrl.CriticValues(critic, batch) // [B][T-1]
		if err != nil {
			return nil, err
		}
		var adv [][]float32
		if scheme == "token" {
			adv, _ = agentrl.GAEAdvantages(rewards, values, mask, 1, lambda)
		} else {
			adv = agentrl.TurnAdvantages(rewards, values, mask, batch.Turns(), 1, lambda)
		}
		if _, err := agentrl.RLUpdate(policy, batch, MaskedWhiten(adv, mask), cfg, rng); err != nil {
			return nil, fmt.Errorf("train_credit step %d: %w", step, err)
		}
		if _, err := agentrl.ValueStep(critic, batch, values, agentrl.ReturnsToGo(rewards, mask), 0, 1e-3); err != nil {
			return nil, fmt.Errorf("train_credit step %d: %w", step, err)
		}
		stats := agentrl.BehaviorStats(trajs)
		history = append(history, agentrl.StepStats{Step: step, Stats: stats})
		prog.Done(step, fmt.Sprintf("pass %.2f", stats.PassRate))
	}
	return &agentrl.Run{Policy: policy, Critic: critic, History: history}, nil
}

// creditRun trains (or loads) one arm: "outcome (GRPO)", "token GAE" or "turn GAE".
func creditRun(name string) *agentrl.Run {
	switch name {
	case "token GAE", "turn GAE":
		scheme := map[string]string{"token GAE": "token", "turn GAE": "turn"}[name]
		key := agentrl.Key("12.2/train_credit", baseID(), costCfg, scheme, must(agentrl.CodeHash("creditRun")))
		return must(agentrl.Cached(store, key, agentrl.RunCodec(), func() (*agentrl.Run, error) {
			return TrainCredit(rlBase(), warmedCritic(), trainTasks, tok, costCfg, scheme, 40, 0.95)
		}))
	}
	return must(agentrl.TrainedRun(store, rlBase(), tok, trainTasks, costCfg, 40, "", nil))
}

// explainedVariance scores critic on policy's held-out episodes (16 per task, seed 7): its values against the
// returns-to-go of PerCallRewards under the step cost, over the policy tokens.
func explainedVariance(policy *gomlxmodel.Model, critic *gomlxmodel.Critic) float64 {
	cfg := costCfg
	cfg.GroupSize = 16
	trajs := must(agentrl.SampleGroups(policy, nil, heldoutTasks, tok, cfg, agentrl.NewRNG(7)))
	batch := agentrl.Collate(trajs, tok.PadID)
	mask := batch.Mask()
	returns := agentrl.ReturnsToGo(PerCallRewards(trajs, mask, stepCost), mask)
	return agentrl.ExplainedVariance(must(agentrl.CriticValues(critic, batch)), returns, mask)
}

func main() {
	run := creditRun("turn GAE")
	trajs := must(agentrl.SampleGroups(run.Policy, nil, heldoutTasks, tok, costCfg, agentrl.NewRNG(7)))
	// The first successful episode that reads, edits, tests and submits; failing that, the first that reads and passes.
	pick := -1
	for i, t := range trajs {
		if !(t.Info.Submitted && t.Info.HiddenPass && t.Info.NReads == 1) {
			continue
		}
		if pick < 0 {
			pick = i
		}
		if t.Info.NTests == 1 && t.Info.NTurns == 4 {
			pick = i
			break
		}
	}
	if pick < 0 {
		fmt.Println("no successful reading episode among the held-out samples")
		return
	}
	t := trajs[pick]
	batch := agentrl.Collate([]agentrl.Trajectory{t}, tok.PadID)
	mask := batch.Mask()
	rewards := PerCallRewards([]agentrl.Trajectory{t}, mask, stepCost)
	values := must(agentrl.CriticValues(run.Critic, batch))
	calls := agentrl.TurnCredit(rewards[0], values[0], mask[0], batch.Turns()[0], 1, 0.95)
	tokenAdv, _ := agentrl.GAEAdvantages(rewards, values, mask, 1, 0.95)
	names := agentrl.CallTexts(t, tok)
	series := []chart.Series{{Name: "reward r_k"}, {Name: "value V(s_k)"}, {Name: "TD error δ_k"}, {Name: "advantage A_k"}}
	for k, c := range calls {
		for i, v := range []float64{c.Reward, c.Value, c.TD, c.Advantage} {
			series[i].Values = append(series[i].Values, v)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for j, m := range mask[0] {
			if m == 1 && batch.Turns()[0][j] == c.Turn {
				lo, hi = min(lo, float64(tokenAdv[0][j])), max(hi, float64(tokenAdv[0][j]))
			}
		}
		fmt.Printf("call %d %-22s r %+.3f | V %+.3f | δ %+.3f | A %+.3f | token-GAE spread inside the call %.3f\n",
			k, names[k], c.Reward, c.Value, c.TD, c.Advantage, hi-lo)
	}
	gonbui.DisplaySVG(chart.Bars("Figure 12.1: turn-level credit on one successful held-out episode (turn-GAE policy)", names, series))
}
