package main

import (
	"fmt"
	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
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

// trainedRun trains (or loads) 40 default-loop steps of cfg from the base agent.
func trainedRun(cfg agentrl.RLConfig) *agentrl.Run {
	return must(agentrl.TrainedRun(store, rlBase(), tok, trainTasks, cfg, 40, "", nil))
}

// windows averages f over consecutive 10-step windows of a history, rounded to two decimals.
func windows(history []agentrl.StepStats, f func(agentrl.StepStats) float64) windowList {
	var out windowList
	for w := 0; w+10 <= len(history); w += 10 {
		total := 0.0
		for _, h := range history[w : w+10] {
			total += f(h)
		}
		out = append(out, math.Round(total/10*100)/100)
	}
	return out
}

// windowList prints as the book's lists of window means do: [1.82, 1.02, 1.01, 1.01].
type windowList []float64

func (l windowList) String() string {
	parts := make([]string, len(l))
	for i, x := range l {
		parts[i] = strconv.FormatFloat(x, 'f', -1, 64)
		if x == math.Trunc(x) {
			parts[i] += ".0"
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

var penalty03 = func() agentrl.RLConfig {
	cfg := agentrl.DefaultRLConfig()
	cfg.Reward.StepPenalty = 0.3
	return cfg
}()

// TrainRampedPenalty is train_rl on a copy of base with the step penalty ramped in: step k of steps charges
// cfg.Reward.StepPenalty·k/(steps−1) per call, so the first step trains on the verdict alone and the last on the
// full cost. The run's generator is seeded with cfg.Seed.
func TrainRampedPenalty(base *gomlxmodel.Model, tasks []agentrl.Task, tok *agentrl.Tokenizer, cfg agentrl.RLConfig, steps int) (*agentrl.Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	costAt := func(step int) agentrl.RLConfig {
		stepCfg := cfg
		stepCfg.Reward.StepPenalty = cfg.Reward.StepPenalty * float64(step) / float64(max(steps-1, 1))
		return stepCfg
	}
	history, err := agentrl.TrainRLSchedule(policy, tasks, tok, steps, costAt, nil)
	if err != nil {
		return nil, fmt.Errorf("train_ramped_penalty: %w", err)
	}
	return &agentrl.Run{Policy: policy, History: history}, nil
}

var freeCallsCfg = func() agentrl.RLConfig {
	cfg := penalty03
	cfg.Reward.FreeCalls = 3
	return cfg
}()

// rampedRun trains (or loads) 40 steps with the 0.3 cost ramped in from 0.
func rampedRun() *agentrl.Run {
	key := agentrl.Key("12.7/ramped_penalty", must(agentrl.Fingerprint(rlBase())), trainTasks, penalty03, 40,
		must(agentrl.CodeHash("rampedRun")))
	return must(agentrl.Cached(store, key, agentrl.RunCodec(), func() (*agentrl.Run, error) {
		return TrainRampedPenalty(rlBase(), trainTasks, tok, penalty03, 40)
	}))
}

var neverCfg = func() agentrl.RLConfig {
	cfg := agentrl.DefaultRLConfig()
	cfg.Reward.WrongSubmit = -1
	return cfg
}()

// maskedTruncationAdvantages: group mean and std over submitted episodes only; unsubmitted episodes get 0.
func maskedTruncationAdvantages(trajs []agentrl.Trajectory, G int) []float32 {
	adv := make([]float32, len(trajs))
	for start := 0; start < len(trajs); start += G {
		group := trajs[start : start+G]
		n, mean, ss := 0.0, 0.0, 0.0
		for _, t := range group {
			if t.Info.Submitted {
				n, mean = n+1, mean+t.Reward
			}
		}
		mean /= max(n, 1)
		for _, t := range group {
			if t.Info.Submitted {
				ss += (t.Reward - mean) * (t.Reward - mean)
			}
		}
		std := math.Sqrt(ss / max(n-1, 1))
		for i, t := range group {
			if t.Info.Submitted {
				adv[start+i] = float32((t.Reward - mean) / (std + 1e-6))
			}
		}
	}
	return adv
}

// trainMaskedTruncation is the never-submit run with truncated episodes masked out of the loss.
func trainMaskedTruncation() (*agentrl.Run, error) {
	rng, policy := agentrl.NewRNG(neverCfg.Seed), must(rlBase().Clone())
	var history []agentrl.StepStats
	for step := range 40 {
		trajs, _ := must2(agentrl.SampleStep(policy, nil, trainTasks, tok, neverCfg, rng))
		batch := agentrl.Collate(trajs, tok.PadID)
		adv := maskedTruncationAdvantages(trajs, neverCfg.GroupSize)
		must(agentrl.RLUpdate(policy, batch, agentrl.BroadcastAdvantages(adv, batch.Mask()), neverCfg, rng))
		history = append(history, agentrl.StepStats{Step: step, Stats: agentrl.BehaviorStats(trajs)})
	}
	return &agentrl.Run{Policy: policy, History: history}, nil
}

func maskedRun() *agentrl.Run {
	key := agentrl.Key("12.7/masked_truncation", must(agentrl.Fingerprint(rlBase())), neverCfg, must(agentrl.CodeHash("maskedRun")))
	return must(agentrl.Cached(store, key, agentrl.RunCodec(), trainMaskedTruncation))
}

func main() {
	fmt.Println("masked truncation, submit rate by 10-step window:",
		windows(maskedRun().History, func(h agentrl.StepStats) float64 { return h.SubmitRate }))
	for _, arm := range []struct {
		name   string
		policy *gomlxmodel.Model
	}{{"truncation = 0", trainedRun(neverCfg).Policy}, {"truncation masked", maskedRun().Policy}} {
		s := heldOut(arm.policy, neverCfg)
		fmt.Printf("%-18s held-out pass %.3f | turns %.2f\n", arm.name, s.PassRate, s.Turns)
	}
}
