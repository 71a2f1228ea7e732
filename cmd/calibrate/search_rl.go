package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/internal/recipe"
)

// rlBand is one class-2 band of a book line that the search's RL stage reads (testdata/reproduction-targets.md).
type rlBand struct {
	id, what string
	lo, hi   float64
}

// rlBands are the bands of the lines the three runs of the RL stage decide, besides the mechanisms that cmd/seeds
// counts under RL seeds: the default row (C12), the 0.05-cost row that is also 12.2's outcome arm (C8, C13), the
// default run's malformed calls at the start (C26), and the never-submit run held out (C43).
var rlBands = []rlBand{
	{"C12", "default held-out pass", 0.662, 0.862},
	{"C12", "default reward, steps 30-39", 0.61, 0.81},
	{"C8", "cost 0.05 train pass, steps 30-39", 0.57, 0.77},
	{"C8", "cost 0.05 held-out pass", 0.556, 0.756},
	{"C8", "cost 0.05 turns", 2.46, 3.16},
	{"C13", "cost 0.05 reward, steps 30-39", 0.43, 0.63},
	{"C26", "default malformed per turn, steps 0-4", 0.008, 0.035},
	{"C43", "never-submit held-out pass", 0.59, 0.83},
}

// rlStage trains (or loads) the default run, the 0.05-cost run, the never-submit run, the 0.3-cost run and the
// 3-turn arm of each candidate and prints the values the bands read, the train/held-out gap of the first two, and
// the mechanisms these runs decide: the
// never-submit run's stall (C34), the malformed-call ratio (C27), the 0.3 cost's collapse (C14, C32) and the 3-turn
// arm's regime (C15).
func rlStage(l lab, cands []recipe.Candidate) error {
	for i, c := range cands {
		fmt.Fprintf(os.Stderr, "RL stage, candidate %d of %d: %s (%s)\n", i+1, len(cands), c.Name, c.Settings)
		ch, _, err := l.candidate(c.Base, c.Tasks)
		if err != nil {
			return err
		}
		cheap, never, dear, short := c.RL, c.RL, c.RL, c.RL
		cheap.Reward.StepPenalty = 0.05
		never.Reward.WrongSubmit = -1
		dear.Reward.StepPenalty = 0.3
		short.MaxTurns = 3
		cfgs := [...]agentrl.RLConfig{c.RL, cheap, never, dear, short}
		var runs [len(cfgs)]*agentrl.Run
		var held [len(cfgs)]agentrl.Stats
		for k, cfg := range cfgs {
			if runs[k], err = ch.Run(cfg); err != nil {
				return fmt.Errorf("candidate %s: %w", c.Name, err)
			}
			if held[k], err = ch.HeldOut(runs[k].Policy, cfg); err != nil {
				return fmt.Errorf("candidate %s: %w", c.Name, err)
			}
		}
		// The chapter's trained policies pass as well held out as on the training tasks (held-out minus train
		// between -0.01 and +0.07): the default and the 0.05-cost runs evaluated on the training tasks as HeldOut
		// evaluates the held-out ones.
		onTrain := *ch
		onTrain.HeldOutTasks = ch.Train
		var train [2]agentrl.Stats
		for k := range train {
			if train[k], err = onTrain.HeldOut(runs[k].Policy, cfgs[k]); err != nil {
				return fmt.Errorf("candidate %s: %w", c.Name, err)
			}
		}
		mean := func(h []agentrl.StepStats, f func(agentrl.StepStats) float64) float64 {
			total := 0.0
			for _, s := range h {
				total += f(s)
			}
			return total / float64(len(h))
		}
		steps, err := agentrl.LogByStep(runs[0].History, runs[0].Log)
		if err != nil {
			return err
		}
		pooled := func(from, to int) float64 { return agentrl.InfoStats(slices.Concat(steps[from:to]...)).InvalidPerTurn }
		reward := func(s agentrl.StepStats) float64 { return s.Reward }
		values := []float64{held[0].PassRate, mean(runs[0].History[30:], reward),
			mean(runs[1].History[30:], func(s agentrl.StepStats) float64 { return s.PassRate }), held[1].PassRate, held[1].Turns,
			mean(runs[1].History[30:], reward), pooled(0, 5), held[2].PassRate}
		inside, cells := 0, make([]string, len(values))
		for j, b := range rlBands {
			mark := "✗"
			if values[j] >= b.lo-1e-9 && values[j] <= b.hi+1e-9 {
				mark = "✓"
				inside++
			}
			cells[j] = fmt.Sprintf("%s %.3f%s", b.id, values[j], mark)
		}
		submits := make([]float64, len(runs[2].History))
		for j, s := range runs[2].History {
			submits[j] = s.SubmitRate
		}
		windows := make([]string, 4)
		for w := range windows {
			windows[w] = fmt.Sprintf("%.2f", mean(runs[3].History[10*w:10*w+10], func(s agentrl.StepStats) float64 { return s.Turns }))
		}
		fmt.Printf("%s | cost 0.3 (C14, C32): held-out pass %.3f turns %.2f, turns by window %s | 3 turns (C15): held-out pass %.3f reads %.2f turns %.2f\n",
			c.Name, held[3].PassRate, held[3].Turns, strings.Join(windows, " "), held[4].PassRate, held[4].Reads, held[4].Turns)
		fmt.Printf("%s | held-out minus train pass (book -0.01 to +0.07): default %.3f - %.3f = %+.3f (reads %.2f, %.2f), cost 0.05 %.3f - %.3f = %+.3f (reads %.2f, %.2f)\n",
			c.Name, held[0].PassRate, train[0].PassRate, held[0].PassRate-train[0].PassRate, held[0].Reads, train[0].Reads,
			held[1].PassRate, train[1].PassRate, held[1].PassRate-train[1].PassRate, held[1].Reads, train[1].Reads)
		fmt.Printf("%s | RL bands %d of %d | %s | default tests %.2f reads %.2f | cost 0.05 edits %.2f tests %.2f | C27 ratio %.2f | never-submit min submit 5-15 %.2f (step 0 %.2f), held-out turns %.2f | %s\n",
			c.Name, inside, len(rlBands), strings.Join(cells, " "), held[0].Tests, held[0].Reads, held[1].Edits, held[1].Tests,
			pooled(35, 40)/pooled(0, 5), slices.Min(submits[5:16]), submits[0], held[2].Turns, c.Settings)
	}
	return nil
}
