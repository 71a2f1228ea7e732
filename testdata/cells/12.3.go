package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/chart"
	"github.com/agentrl-go/agentrl/chart/nbdisplay"
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

// Declarations only: this cell computes nothing. Later cells use arm, budgetArms, armRun, lateMean, lateReward.
// arm is one configuration of this section's comparison.
type arm struct {
	name string
	cfg  agentrl.RLConfig
}

var budgetArms = func() []arm {
	withPenalty := func(c float64) agentrl.RLConfig {
		cfg := agentrl.DefaultRLConfig()
		cfg.Reward.StepPenalty = c
		return cfg
	}
	threeTurns := agentrl.DefaultRLConfig()
	threeTurns.MaxTurns = 3
	return []arm{{"default", agentrl.DefaultRLConfig()}, {"penalty 0.05", withPenalty(0.05)},
		{"penalty 0.3", withPenalty(0.3)}, {"max_turns 3", threeTurns}}
}()

// armRun trains (or loads) an arm: TrainRL on a copy of the base agent, every episode's terminal info logged.
func armRun(a arm) *agentrl.Run { return must(ch.Run(a.cfg)) }

// lateMean is the mean of a training-batch statistic over steps 30–39 of a run's history.
func lateMean(history []agentrl.StepStats, value func(agentrl.Stats) float64) float64 {
	mean := 0.0
	for _, h := range history[30:40] {
		mean += value(h.Stats) / 10
	}
	return mean
}

// lateReward is a run's mean batch reward over steps 30–39, the last column of the book's table.
func lateReward(run *agentrl.Run) float64 {
	return lateMean(run.History, func(s agentrl.Stats) float64 { return s.Reward })
}

// Declarations only: this cell computes nothing. Later cells use fig122Curve, firstStep.
// fig122Curve is one of Figure 12.2's curves: a training-batch statistic of a run's history, 5-step moving average.
func fig122Curve(history []agentrl.StepStats, value func(agentrl.Stats) float64) []float64 {
	var ys []float64
	for _, h := range history {
		ys = append(ys, value(h.Stats))
	}
	return chart.MovingAverage(ys, 5)
}

// firstStep is the first step from `from` on at which ok holds for the curve, as text: "-" if none.
func firstStep(ys []float64, from int, ok func(float64) bool) string {
	if s := chart.FirstIndex(ys, from, ok); s >= 0 {
		return fmt.Sprint(s)
	}
	return "-"
}

// Declarations only: this cell computes nothing. Later cells use habitsOf.
// readHabits are a policy's next-call probabilities around a read, averaged over the training tasks, 16 renamings
// each (seed 7). Exact: nothing is sampled.
type readHabits struct {
	First, Again    float64 // a read as the first call; a read right after a first read
	RightEdit, Edit float64 // right after a first read: the edit the task needs; any edit
}

func habitsOf(policy *gomlxmodel.Model) readHabits {
	cfg, names := agentrl.DefaultRLConfig(), agentrl.NewRNG(7)
	read := tok.EncodeCall(agentrl.ToolRead)
	calls := [][]int32{read}
	for _, op := range agentrl.Ops() {
		calls = append(calls, tok.EncodeCall(agentrl.ToolEdit, op))
	}
	var starts, afterRead [][]int32
	var right []int // index in calls of each context's right edit
	for _, t := range trainTasks {
		for range 16 {
			e := agentrl.NewEpisode(must(agentrl.MakeEnv(cfg)), agentrl.RandomizeNames(t, names), tok, cfg.MaxTurns, agentrl.ContextLen)
			starts = append(starts, slices.Clone(e.IDs))
			e.Act(read, nil)
			afterRead = append(afterRead, slices.Clone(e.IDs))
			right = append(right, 1+slices.Index(agentrl.Ops(), t.Op))
		}
	}
	var h readHabits
	n := float64(len(starts))
	for _, p := range must(agentrl.CallProbs(policy, starts, calls[:1], tok.PadID)) {
		h.First += p[0] / n
	}
	for i, p := range must(agentrl.CallProbs(policy, afterRead, calls, tok.PadID)) {
		h.Again += p[0] / n
		h.RightEdit += p[right[i]] / n
		for _, q := range p[1:] {
			h.Edit += q / n
		}
	}
	return h
}

// Declarations only: this cell computes nothing. Later cells use passByOp.
// passByOp samples policy 16 times on each task (seed 7) in cfg's environment and returns its pass rate per op
// the tasks need, in agentrl.Ops() order, then over all tasks.
func passByOp(policy *gomlxmodel.Model, tasks []agentrl.Task, cfg agentrl.RLConfig) []float64 {
	cfg.GroupSize = 16
	trajs := must(agentrl.SampleGroups(policy, nil, tasks, tok, cfg, agentrl.NewRNG(7)))
	passed, total := map[string]float64{}, map[string]float64{}
	for i, t := range trajs {
		op := tasks[i/cfg.GroupSize].Op
		total[op]++
		if t.Info.Submitted && t.Info.HiddenPass {
			passed[op]++
		}
	}
	var rates []float64
	all, n := 0.0, 0.0
	for _, op := range agentrl.Ops() {
		rates = append(rates, passed[op]/total[op])
		all, n = all+passed[op], n+total[op]
	}
	return append(rates, all/n)
}

func cell2() {
	fmt.Printf("vocabulary %d tokens | %d training tasks, %d held-out | TinyAgent with %d parameters\n",
		tok.VocabSize(), len(trainTasks), len(heldoutTasks), rlBase().NumParams())
}

func cell4() {
	runs := make([]*agentrl.Run, len(budgetArms))
	for i, a := range budgetArms {
		runs[i] = armRun(a)
		fmt.Printf("%-13s trained: step 0 pass %.2f -> step 39 pass %.2f\n", a.name, runs[i].History[0].PassRate, runs[i].History[39].PassRate)
	}
	// Each batch's reward is its pass rate less the step cost of its calls: the identity, checked at every step.
	for i, a := range budgetArms {
		run, cost, worst := runs[i], a.cfg.Reward.StepPenalty, 0.0
		for _, h := range run.History {
			worst = max(worst, math.Abs(h.Reward-(h.PassRate-cost*h.Turns)))
		}
		fmt.Printf("%-13s batch reward = pass - %.2f x turns at every step (largest difference %.1e) | step 0 turns %.2f\n",
			a.name, cost, worst, run.History[0].Turns)
	}
}

func cell5() {
	fmt.Printf("%-13s | held-out pass  reads  tests  edits  turns | batch reward, steps 30-39\n", "arm")
	for _, a := range budgetArms {
		run := armRun(a)
		s := heldOut(run.Policy, a.cfg)
		fmt.Printf("%-13s | %13.3f %6.2f %6.2f %6.2f %6.2f | %+.3f\n", a.name, s.PassRate, s.Reads, s.Tests, s.Edits, s.Turns, lateReward(run))
	}
}

func cell6() {
	histories := make([][]agentrl.StepStats, len(budgetArms)) // each arm's run, loaded once
	for i, a := range budgetArms {
		histories[i] = armRun(a).History
	}
	metrics := []struct {
		title string
		value func(agentrl.Stats) float64
	}{
		{"hidden-test pass rate", func(s agentrl.Stats) float64 { return s.PassRate }},
		{"reads per episode", func(s agentrl.Stats) float64 { return s.Reads }},
		{"tests per episode", func(s agentrl.Stats) float64 { return s.Tests }},
		{"turns per episode", func(s agentrl.Stats) float64 { return s.Turns }},
	}
	var panels []chart.Panel
	for _, m := range metrics {
		panel := chart.Panel{Title: m.title}
		for i, a := range budgetArms {
			var ys []float64
			for _, h := range histories[i] {
				ys = append(ys, m.value(h.Stats))
			}
			panel.Lines = append(panel.Lines, chart.Series{Name: a.name, Values: chart.MovingAverage(ys, 5)})
		}
		panels = append(panels, panel)
	}
	fig := chart.Panels("Figure 12.2: behavior over training (training batch, 5-step moving average)", "step", panels)
	if err := nbdisplay.Display(fig); err != nil {
		panic(err)
	}
	for i, a := range budgetArms {
		h := histories[i]
		fmt.Printf("%-13s turns by 10-step window:", a.name)
		for w := 0; w < 40; w += 10 {
			t := 0.0
			for _, s := range h[w : w+10] {
				t += s.Turns / 10
			}
			fmt.Printf(" %.2f", t)
		}
		fmt.Println()
	}
}

func cell8() {
	history := map[string][]agentrl.StepStats{} // each arm's run, loaded once
	for _, a := range budgetArms {
		history[a.name] = armRun(a).History
	}
	pass := func(s agentrl.Stats) float64 { return s.PassRate }
	reads := func(s agentrl.Stats) float64 { return s.Reads }
	tests := func(s agentrl.Stats) float64 { return s.Tests }
	turns := func(s agentrl.Stats) float64 { return s.Turns }

	peak, at := chart.Peak(fig122Curve(history["default"], reads))
	fmt.Printf("%-13s reads peak %.2f at step %d | steps 30-39 %.2f\n", "default", peak, at, lateMean(history["default"], reads))

	cheapTests, defaultTests := fig122Curve(history["penalty 0.05"], tests), fig122Curve(history["default"], tests)
	testPeak, testAt := chart.Peak(cheapTests)
	fmt.Printf("%-13s reads up to 0.85 at step %s | tests from %.2f peak %.2f at step %d (default then %.2f, from %.2f) | tests down to 0.15 at step %s\n",
		"penalty 0.05", firstStep(fig122Curve(history["penalty 0.05"], reads), 0, func(y float64) bool { return y >= 0.85 }),
		cheapTests[0], testPeak, testAt, defaultTests[testAt], defaultTests[0],
		firstStep(cheapTests, testAt, func(y float64) bool { return y <= 0.15 }))

	dearPass := fig122Curve(history["penalty 0.3"], pass)
	fmt.Printf("%-13s turns down to 1.10 at step %s | pass up by 0.10 at step %s\n", "penalty 0.3",
		firstStep(fig122Curve(history["penalty 0.3"], turns), 0, func(y float64) bool { return y <= 1.10 }),
		firstStep(dearPass, 0, func(y float64) bool { return y >= dearPass[0]+0.10 }))

	shortPass := fig122Curve(history["max_turns 3"], pass)[10:]
	fmt.Printf("%-13s reads down to 0.05 at step %s | pass over steps 10-39 from %.2f to %.2f\n", "max_turns 3",
		firstStep(fig122Curve(history["max_turns 3"], reads), 0, func(y float64) bool { return y <= 0.05 }),
		slices.Min(shortPass), slices.Max(shortPass))
}

func cell10() {
	rereading := agentrl.DefaultBaseConfig()
	rereading.RereadProb = 0.2
	rereadCh := must(ch.With(ch12.Recipe(rereading))) // the chapter with that base agent
	defaultArm := budgetArms[0]
	bases := []struct {
		name string
		base *gomlxmodel.Model
		run  *agentrl.Run
	}{
		{"our base agent", rlBase(), armRun(defaultArm)},
		{"re-reading base", must(rereadCh.Base()), must(rereadCh.Run(defaultArm.cfg))},
	}
	reads := func(s agentrl.Stats) float64 { return s.Reads }
	pass := func(s agentrl.Stats) float64 { return s.PassRate }
	fmt.Println("default arm from | P(read) first, after a read | step 0: pass turns submit reads | reads peak (5-step), steps 30-39 | held-out pass")
	readPanel, passPanel := chart.Panel{Title: "reads per episode"}, chart.Panel{Title: "hidden-test pass rate"}
	for _, b := range bases {
		habits := habitsOf(b.base)
		h := b.run.History
		peak, at := chart.Peak(fig122Curve(h, reads))
		fmt.Printf("%-16s |          %.3f  %.3f       |        %.2f  %.2f   %.2f  %.2f | %.2f at step %2d, %.2f           | %.3f\n",
			b.name, habits.First, habits.Again, h[0].PassRate, h[0].Turns, h[0].SubmitRate, h[0].Reads, peak, at, lateMean(h, reads),
			heldOut(b.run.Policy, defaultArm.cfg).PassRate)
		readPanel.Lines = append(readPanel.Lines, chart.Series{Name: b.name, Values: fig122Curve(h, reads)})
		passPanel.Lines = append(passPanel.Lines, chart.Series{Name: b.name, Values: fig122Curve(h, pass)})
	}
	fig := chart.Panels("The default arm from each base agent (training batch, 5-step moving average)", "step",
		[]chart.Panel{readPanel, passPanel})
	if err := nbdisplay.Display(fig); err != nil {
		panic(err)
	}
}

func cell11() {
	weaker := agentrl.DefaultBaseConfig()
	weaker.MappingRightProb = 0.80
	chapters := []struct {
		name string
		ch   *ch12.Chapter // its base agent, and its runs from that agent
	}{{"ours", ch}, {"weaker mapping", must(ch.With(ch12.Recipe(weaker)))}}
	reads := func(s agentrl.Stats) float64 { return s.Reads }
	pass := func(s agentrl.Stats) float64 { return s.PassRate }
	fmt.Println("base agent     | after a read: right edit  any edit | arm           | reads up to 0.85 at step | steps 30-39: reads  pass")
	for _, b := range chapters {
		habits := habitsOf(must(b.ch.Base()))
		for i, a := range budgetArms[:2] { // the default and the 0.05 penalty
			h := must(b.ch.Run(a.cfg)).History
			probs := strings.Repeat(" ", 34)
			if i == 0 {
				probs = fmt.Sprintf("%24.3f %9.3f", habits.RightEdit, habits.Edit)
			}
			fmt.Printf("%-14s | %s | %-13s | %24s |             %.2f  %.2f\n", b.name, probs, a.name,
				firstStep(fig122Curve(h, reads), 0, func(y float64) bool { return y >= 0.85 }), lateMean(h, reads), lateMean(h, pass))
		}
	}
}

func cell13() {
	short := budgetArms[3]
	policy := armRun(short).Policy
	fmt.Printf("%s arm, pass rate by the op a task needs (16 episodes per task)\n%-15s", short.name, "")
	for _, op := range agentrl.Ops() {
		fmt.Printf(" %14s", op)
	}
	fmt.Printf(" | %5s\n", "all")
	for _, split := range []struct {
		name  string
		tasks []agentrl.Task
	}{{"training tasks", trainTasks}, {"held-out tasks", heldoutTasks}} {
		rates := passByOp(policy, split.tasks, short.cfg)
		fmt.Printf("%-15s", split.name)
		for _, r := range rates[:len(rates)-1] {
			fmt.Printf(" %14.2f", r)
		}
		fmt.Printf(" | %5.2f\n", rates[len(rates)-1])
	}
	ceiling := func(tasks []agentrl.Task) float64 {
		best := 0.0
		for _, op := range agentrl.Ops() {
			best = max(best, must(agentrl.BlindPass(tasks, op)))
		}
		return best
	}
	fmt.Printf("blind ceiling (one op, always, without reading): best %.3f of training tasks, %.3f of held-out tasks\n",
		ceiling(trainTasks), ceiling(heldoutTasks))
}

func cell14() {
	threeTurns := budgetArms[3]
	fmt.Printf("%s arm | held-out pass  reads  tests  edits  turns  malformed/turn | batch reward | outcome\n", threeTurns.name)
	for seed := range uint64(6) {
		a := threeTurns
		a.cfg.Seed = seed
		run := armRun(a)
		s := heldOut(run.Policy, a.cfg)
		outcome := "mixed"
		switch {
		case s.Reads >= 0.5:
			outcome = "reader"
		case s.Reads <= 0.05:
			outcome = "blind guesser"
		}
		fmt.Printf("RL seed %d      | %13.3f %6.2f %6.2f %6.2f %6.2f %14.3f | %+12.3f | %s\n",
			seed, s.PassRate, s.Reads, s.Tests, s.Edits, s.Turns, s.InvalidPerTurn, lateReward(run), outcome)
	}
}

func main() {}
