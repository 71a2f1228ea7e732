package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
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

// Declarations only: this cell computes nothing. Later cells use trainedRun, windows, penalty03.
// trainedRun trains (or loads) 40 default-loop steps of cfg from the base agent.
func trainedRun(cfg agentrl.RLConfig) *agentrl.Run {
	return must(ch.Run(cfg))
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

// RampedPenalty is the schedule of a step penalty ramped in over steps steps: step k charges
// cfg.Reward.StepPenalty·k/(steps−1) per call, so the first step trains on the verdict alone and the last on the
// full cost. A GRPO run takes it as WithSchedule(RampedPenalty(cfg, steps)).
func RampedPenalty(cfg agentrl.RLConfig, steps int) func(step int) agentrl.RLConfig {
	return func(step int) agentrl.RLConfig {
		stepCfg := cfg
		stepCfg.Reward.StepPenalty = cfg.Reward.StepPenalty * float64(step) / float64(max(steps-1, 1))
		return stepCfg
	}
}

var freeCallsCfg = func() agentrl.RLConfig {
	cfg := penalty03
	cfg.Reward.FreeCalls = 3
	return cfg
}()

// rampedRun trains (or loads) 40 steps with cfg's step cost ramped in from 0.
func rampedRun(cfg agentrl.RLConfig) *agentrl.Run {
	return must(ch.Run(cfg, agentrl.WithSchedule(RampedPenalty(cfg, ch12.Steps))))
}

// Declarations only: this cell computes nothing. Later cells use neverCfg.
var neverCfg = func() agentrl.RLConfig {
	cfg := agentrl.DefaultRLConfig()
	cfg.Reward.WrongSubmit = -1
	return cfg
}()

// Declarations only: this cell computes nothing. Later cells use maskedRun.
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

// MaskedTruncation is the never-submit run with truncated episodes masked out of the loss, the book's loop: each
// step samples the batch and updates the policy on maskedTruncationAdvantages instead of the group advantage.
type MaskedTruncation struct{ Steps int }

// Plan is the run's steps and seed.
func (m MaskedTruncation) Plan() (int, uint64) { return m.Steps, neverCfg.Seed }

// Start copies the base agent.
func (m MaskedTruncation) Start(base *gomlxmodel.Model) (*agentrl.Run, error) {
	policy, err := base.Clone()
	return &agentrl.Run{Policy: policy}, err
}

// Step is one step of the loop.
func (m MaskedTruncation) Step(run *agentrl.Run, step int, g *rand.Rand) error {
	run.Policy.SetAnchor(run.Base)
	trajs, _, err := agentrl.SampleStep(run.Policy, agentrl.EnvFactoryOf(neverCfg), trainTasks, tok, neverCfg, g)
	if err != nil {
		return err
	}
	batch := agentrl.Collate(trajs, tok.PadID)
	adv := agentrl.BroadcastAdvantages(maskedTruncationAdvantages(trajs, neverCfg.GroupSize), batch.Mask())
	if _, err := agentrl.RLUpdate(run.Policy, batch, adv, neverCfg, g); err != nil {
		return err
	}
	run.History = append(run.History, agentrl.StepStats{Step: step, Stats: agentrl.BehaviorStats(trajs)})
	return nil
}

// maskedRun trains (or loads) MaskedTruncation's 40 steps.
func maskedRun() *agentrl.Run { return must(ch.RunLoop(MaskedTruncation{Steps: ch12.Steps})) }

func cell2() {
	fmt.Printf("vocabulary %d tokens | %d training tasks, %d held-out | TinyAgent with %d parameters\n",
		tok.VocabSize(), len(trainTasks), len(heldoutTasks), rlBase().NumParams())
}

func cell4() {
	run := trainedRun(penalty03)
	history := run.History
	p, K := history[0].PassRate, history[0].Turns
	fmt.Printf("starting policy: pass %.2f, turns %.2f -> attempt worth %+.2f; submit at once worth %+.2f\n", p, K, p-0.3*K, -0.3)
	fmt.Println("penalty 0.3 run, turns per episode by 10-step window:", windows(history, func(h agentrl.StepStats) float64 { return h.Turns }))

	// The counts behind step 0's rounded rates: the base agent's first batch, the same in every seed-0 run.
	var passed, submitted, erred int
	for _, info := range run.Log[:history[0].Episodes] {
		if info.Solved() {
			passed++
		}
		if info.Submitted {
			submitted++
		}
		if info.NInvalid > 0 {
			erred++
		}
	}
	fmt.Printf("step-0 batch: %d of %d episodes pass, %d submit, %d make a malformed call | turns %.3f, reads %.3f per episode\n",
		passed, history[0].Episodes, submitted, erred, history[0].Turns, history[0].Reads)
}

func cell5() {
	history := trainedRun(penalty03).History
	p, K := history[0].PassRate, history[0].Turns
	fmt.Printf("starting policy: break-even cost p/(K-1) = %.3f\n", p/(K-1))
	fmt.Println("cost | held-out pass under RL seeds 0-5    | runs that learned to read")
	for _, c := range []float64{0.1, 0.15, 0.2} {
		fmt.Printf("%.2f |", c)
		readers := 0
		for seed := range uint64(6) {
			cfg := agentrl.DefaultRLConfig()
			cfg.Reward.StepPenalty, cfg.Seed = c, seed
			s := heldOut(trainedRun(cfg).Policy, cfg)
			fmt.Printf(" %.3f", s.PassRate)
			if s.Reads >= 0.5 {
				readers++
			}
		}
		fmt.Printf(" | %d of 6\n", readers)
	}
}

func cell7() {
	turns := func(h agentrl.StepStats) float64 { return h.Turns }
	fmt.Println("cost 0.3, remedy     | step-0 reward | turns by 10-step window  | held-out pass  reads  tests  turns")
	for _, arm := range []struct {
		name string
		run  *agentrl.Run
	}{
		{"none", trainedRun(penalty03)},
		{"first 3 calls free", trainedRun(freeCallsCfg)},
		{"ramped in from 0", rampedRun(penalty03)},
	} {
		s := heldOut(arm.run.Policy, penalty03)
		fmt.Printf("%-20s | %+13.2f | %-24s | %13.3f %6.2f %6.2f %6.2f\n", arm.name, arm.run.History[0].Reward,
			windows(arm.run.History, turns), s.PassRate, s.Reads, s.Tests, s.Turns)
	}
}

func cell9() {
	run := trainedRun(neverCfg)
	submit := make([]float64, len(run.History)) // each step's submit rate, read from the episode log
	for k, infos := range must(agentrl.LogByStep(run.History, run.Log)) {
		for _, info := range infos {
			if info.Submitted {
				submit[k]++
			}
		}
		submit[k] /= float64(len(infos))
	}
	for k, h := range run.History {
		if k%5 == 0 || k == 39 {
			fmt.Printf("step %2d | submit rate %.2f | pass %.2f | reward %+.2f | turns %.2f\n", k, submit[k], h.PassRate, h.Reward, h.Turns)
		}
	}

	// Between the printed steps: the lowest submit rate and the longest episodes of steps 5-15, the largest gap
	// between submitting and passing from step 15 on, and the mean submit rate of the last ten steps.
	low, most, gap, late := 5, 5, 15, 0.0
	for k := 5; k <= 15; k++ {
		if submit[k] < submit[low] {
			low = k
		}
		if run.History[k].Turns > run.History[most].Turns {
			most = k
		}
	}
	for k := 15; k < len(submit); k++ {
		if submit[k]-run.History[k].PassRate > submit[gap]-run.History[gap].PassRate {
			gap = k
		}
	}
	for _, s := range submit[30:40] {
		late += s / 10
	}
	fmt.Printf("never-submit run: steps 5-15 lowest submit rate %.3f (step %d), most turns %.2f (step %d) | "+
		"steps 15-39 largest submit - pass %.3f (step %d) | steps 30-39 mean submit rate %.3f\n",
		submit[low], low, run.History[most].Turns, most, submit[gap]-run.History[gap].PassRate, gap, late)
}

func cell10() {
	fixedCfg := neverCfg
	fixedCfg.Reward.Unsubmitted = -1
	run := trainedRun(fixedCfg)
	fmt.Print("unsubmitted = -1, submit rate at steps 0, 5, ..., 35, 39:")
	for k, h := range run.History {
		if k%5 == 0 || k == 39 {
			fmt.Printf(" %.2f", h.SubmitRate)
		}
	}
	s := heldOut(run.Policy, fixedCfg)
	fmt.Printf(" | held-out pass %.3f, submit rate %.2f, turns %.2f\n", s.PassRate, s.SubmitRate, s.Turns)
}

func cell12() {
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

func main() {}
