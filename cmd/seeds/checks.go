package main

import (
	"math"
	"slices"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/chart"
	"github.com/agentrl-go/agentrl/internal/targets"
)

// check is one mechanism check: its report ID, its rule, and whether a seed's outcome satisfies it.
type check struct {
	id, rule string
	holds    func(o outcome) bool
}

// outcome holds what one seed's runs printed in the notebooks' terms.
type outcome struct {
	credit                       [3]creditArm  // §12.2 outcome (GRPO), token GAE, turn GAE
	defaultHeld                  agentrl.Stats // §12.3 default row (held_out)
	defaultHabits                readHabits    // the default policy's next calls around a read (12.3's probe)
	step0                        agentrl.Stats // the default run's step-0 batch (the base agent)
	invalidStart, invalidEnd     float64       // §12.5 malformed calls per turn, steps 0-4 and 35-39
	fullCtx, fullMasked          agentrl.Stats // §12.4 full-context policy under keep_obs=None and 1
	maskedFull, maskedOwn, mask0 agentrl.Stats // §12.4 keep_obs=1 policy under keep_obs=None, 1 and 0
	singleTurn                   agentrl.Stats // §12.6 default policy on single-turn tasks
	turns3                       agentrl.Stats // §12.3 max_turns 3 row
	turns3Reward                 float64       // its batch reward, mean of steps 30-39
	blindCeiling                 float64       // the best blind op's pass rate on the training tasks (12.3)
	penalty                      agentrl.Stats // §12.3 penalty 0.3 row (held_out)
	penaltyReward                float64       // its batch reward, mean of steps 30-39
	penaltyWindows               [4]float64    // §12.7 its turns per episode by 10-step window
	allowance, ramped            agentrl.Stats // §12.7's remedies (ours): first 3 calls free; cost ramped 0 → 0.3
	neverSubmit                  []float64     // §12.7 never-submit run (wrong submission −1): submit rate per step
	fixedSubmit                  []float64     // the same with running out of turns scored −1 (the fix): submit rate per step
	priced, stopped              agentrl.Stats // §12.5 (ours) default runs where a malformed call costs 0.1 or ends the episode
	fig                          fig122        // the four runs of §12.3's Figure 12.2
}

// fig122 holds the training histories Figure 12.2 draws: the default run, the 0.05- and 0.3-cost runs and the
// 3-turn arm; its claims are read off their 5-step moving averages (curve), as 12.3's cell does.
type fig122 struct {
	def, cheap, dear, short []agentrl.StepStats
}

// curve is a Figure 12.2 curve: a statistic of each step's batch, 5-step moving average.
func curve(h []agentrl.StepStats, f func(agentrl.Stats) float64) []float64 {
	ys := make([]float64, len(h))
	for i, s := range h {
		ys[i] = f(s.Stats)
	}
	return chart.MovingAverage(ys, 5)
}

func reads(s agentrl.Stats) float64 { return s.Reads }
func tests(s agentrl.Stats) float64 { return s.Tests }
func turns(s agentrl.Stats) float64 { return s.Turns }
func pass(s agentrl.Stats) float64  { return s.PassRate }

// fig122Stats is what Figure 12.2's claims read off the curves, as 12.3's cell prints it (a step is the first at
// which a 5-step average crosses the level; -1 if none).
type fig122Stats struct {
	defPeak             float64 // the default's highest 5-step reads
	defAt               int     // and its step
	defSettled          float64 // the default's mean reads over steps 30-39
	cheapReads          int     // the 0.05 cost's reads reach 0.85
	cheapTests          []float64
	cheapTestPeak       float64 // the 0.05 cost's highest 5-step tests
	cheapTestAt         int     // and its step
	cheapTestsDown      int     // its tests down to 0.15 after the peak
	defTests            []float64
	dearTurns, dearRise int       // the 0.3 cost's turns down to 1.10; its pass up by 0.10
	shortReads          int       // the 3-turn arm's reads down to 0.05
	shortPass           []float64 // the 3-turn arm's 5-step pass, steps 10-39
}

// stats measures the curves once, for the checks and the report line.
func (f fig122) stats() fig122Stats {
	at := func(ys []float64, ok func(float64) bool) int { return chart.FirstIndex(ys, 0, ok) }
	var s fig122Stats
	s.defPeak, s.defAt = chart.Peak(curve(f.def, reads))
	s.defSettled = mean(f.def[30:40], reads)
	s.cheapReads = at(curve(f.cheap, reads), func(y float64) bool { return y >= 0.85 })
	s.cheapTests, s.defTests = curve(f.cheap, tests), curve(f.def, tests)
	s.cheapTestPeak, s.cheapTestAt = chart.Peak(s.cheapTests)
	s.cheapTestsDown = chart.FirstIndex(s.cheapTests, s.cheapTestAt, func(y float64) bool { return y <= 0.15 })
	dearPass := curve(f.dear, pass)
	s.dearTurns = at(curve(f.dear, turns), func(y float64) bool { return y <= 1.10 })
	s.dearRise = at(dearPass, func(y float64) bool { return y >= dearPass[0]+0.10 })
	s.shortReads = at(curve(f.short, reads), func(y float64) bool { return y <= 0.05 })
	s.shortPass = curve(f.short, pass)[10:]
	return s
}

// creditArm is one §12.2 arm: its held-out statistics and its training batches' mean tests over steps 30-39.
type creditArm struct {
	held       agentrl.Stats
	trainTests float64
}

// row is a policy's held-out statistics as the rules read them.
func row(s agentrl.Stats) targets.Row {
	return targets.Row{Pass: s.PassRate, Reads: s.Reads, Tests: s.Tests, Edits: s.Edits, Turns: s.Turns}
}

// step is a step as the rules read it: +Inf for one that never came (-1).
func step(i int) float64 {
	if i < 0 {
		return math.Inf(1)
	}
	return float64(i)
}

// The book's checks are internal/targets' rules, which the notebooks' report applies to the printed lines.
var checks = []check{
	{"C8", "the step cost removes the test: outcome arm's tests ≤ 0.15 in training (steps 30–39) and held out", func(o outcome) bool {
		return targets.Holds(targets.C8(o.credit[0].trainTests, o.credit[0].held.Tests))
	}},
	{"C10", "all arms read (≥ 0.85); outcome arm's tests and turns ≤ the critic arms' minimum + 0.05", func(o outcome) bool {
		return targets.Holds(targets.C10(row(o.credit[0].held), row(o.credit[1].held), row(o.credit[2].held)))
	}},
	{"C12", "the free test habit survives: tests ≥ 0.40", func(o outcome) bool { return targets.Holds(targets.C12(o.defaultHeld.Tests)) }},
	{"C14", "cost 0.3: submits at once (pass ≤ 0.01, reads/tests/edits ≤ 0.02, turns 1–1.05, reward −0.32 to −0.29)", func(o outcome) bool {
		return targets.Holds(targets.C14(row(o.penalty), o.penaltyReward))
	}},
	{"C32", "cost 0.3: turns by 10-step window, the first in [1.2, 2.6], the others ≤ 1.10, the last within 0.05 of C14's held-out turns", func(o outcome) bool {
		return targets.Holds(targets.C32(o.penaltyWindows, o.penalty.Turns))
	}},
	{"C34", "never-submit run stalls: min submit rate over steps 5–15 ≤ 0.30 and ≤ step 0's − 0.30", func(o outcome) bool {
		return targets.Holds(targets.C34(slices.Min(o.neverSubmit[5:16]), o.neverSubmit[0]))
	}},
	{"C15", "3-turn arm: blind guesser (turns 1.9–2.2, pass 0.20 ± 0.04, reward 0.18 ± 0.05, training pass never above the blind ceiling + 0.05) or reader", func(o outcome) bool {
		return targets.C15(row(o.turns3), o.turns3Reward, slices.Max(curve(o.fig.short, pass)[10:]), o.blindCeiling).OK
	}},
	{"C19", "masking halves the full-context policy's tests and shortens its episodes, pass within 0.08", func(o outcome) bool {
		return targets.Holds(targets.C19(row(o.fullCtx), row(o.fullMasked)))
	}},
	{"C21", "the masked policy loses ≥ 0.10 pass and gains ≥ 0.8 turns under the full context, more than masking costs the full policy + 0.1", func(o outcome) bool {
		return targets.Holds(targets.C21(row(o.maskedFull), row(o.maskedOwn), row(o.fullCtx), row(o.fullMasked)))
	}},
	{"C23", "no observations: the masked policy passes ≤ 0.05", func(o outcome) bool { return targets.Holds(targets.C23(o.mask0.PassRate)) }},
	{"C27", "malformed calls per turn, end / start in [0.4, 1.1]", func(o outcome) bool {
		return targets.Holds(targets.C27(o.invalidStart, o.invalidEnd))
	}},
	{"C28", "single-turn tasks: the multi-turn policy passes ≤ 0.05 and reads ≤ 0.05", func(o outcome) bool {
		return targets.Holds(targets.C28(row(o.singleTurn)))
	}},
	// Figure 12.2's claims (reproduction-targets.md section B; notebooks/harness/bookreport, F2a–F2d).
	{"F2a", "cost 0.3: turns (5-step average) down to 1.10 by step 15, before the pass rate rises 0.10", func(o outcome) bool {
		s := o.fig.stats()
		return targets.Holds(targets.F2a(step(s.dearTurns), step(s.dearRise)))
	}},
	{"F2b", "3 turns: reads down to 0.05 by step 15 and pass in [0.10, 0.30] over steps 10–39 (a reader is not held to it)", func(o outcome) bool {
		if targets.IsReader(row(o.turns3)) {
			return true
		}
		s := o.fig.stats()
		return targets.Holds(targets.F2b(step(s.shortReads), slices.Min(s.shortPass), slices.Max(s.shortPass)))
	}},
	{"F2c", "default: reads overshoot, peaking at step 12 ± 5 at least 0.10 above steps 30–39, which are in [0.85, 1.20]", func(o outcome) bool {
		s := o.fig.stats()
		return targets.Holds(targets.F2c(s.defPeak, step(s.defAt), s.defSettled))
	}},
	{"F2d", "cost 0.05: reads up to 0.85 at step 25 ± 5; tests rise with the default's, then down to 0.15 at step 27 ± 5", func(o outcome) bool {
		s := o.fig.stats()
		return targets.Holds(targets.F2d(targets.Cheap{ReadsUp: step(s.cheapReads), TestsStart: s.cheapTests[0], TestsPeak: s.cheapTestPeak,
			DefaultStart: s.defTests[0], DefaultAt: s.defTests[s.cheapTestAt], TestsDown: step(s.cheapTestsDown)}))
	}},
	// Ours, not the book's: a remedy works when the policy learns to repair instead of collapsing (0.3 cost alone:
	// held-out pass 0). The blind-guess ceiling is 0.20, so passing half the held-out tasks takes reading.
	{"free calls", "(ours, §12.7) cost 0.3 with 3 free calls: held-out pass ≥ 0.5", func(o outcome) bool {
		return o.allowance.PassRate >= 0.5
	}},
	{"ramp", "(ours, §12.7) cost ramped in from 0 to 0.3: held-out pass ≥ 0.5", func(o outcome) bool {
		return o.ramped.PassRate >= 0.5
	}},
	// Ours: §12.7's default fix for the agent that never submits, run.
	{"never-submit fix", "(ours, §12.7) running out of turns scored −1: the submit rate over steps 5–15 never falls below step 0's", func(o outcome) bool {
		return slices.Min(o.fixedSubmit[5:16]) >= o.fixedSubmit[0]
	}},
	// Ours: the book's closing claim of §12.5, that format errors leave under RL only when they cost reward.
	{"priced errors", "(ours, §12.5) a malformed call that costs 0.1 or ends the episode: fewer held-out malformed calls per turn than the default's", func(o outcome) bool {
		return o.priced.InvalidPerTurn < o.defaultHeld.InvalidPerTurn && o.stopped.InvalidPerTurn < o.defaultHeld.InvalidPerTurn
	}},
}

// mark is a check's mark in the per-seed report.
func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// mean is the mean of f over a stretch of a training history.
func mean(h []agentrl.StepStats, f func(agentrl.Stats) float64) float64 {
	sum := 0.0
	for _, s := range h {
		sum += f(s.Stats)
	}
	return sum / float64(len(h))
}
