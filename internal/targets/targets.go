// Package targets holds the mechanism rules (class 3) of the chapter's reproduction targets that two programs
// decide: the notebooks' book-vs-run report (notebooks/harness/bookreport), on the lines the notebooks print, and
// cmd/seeds, on the same runs under other RL seeds. Each rule is a function of the numbers it reads that returns
// its clauses, so both programs hold a run to one set of thresholds, worded the same way.
//
// Values may come from printed lines, rounded to two or three decimals, so every comparison allows 1e-9 of slack
// at its threshold. A step that never came is +Inf.
package targets

import (
	"fmt"
	"math"
	"strconv"
)

// Clause is one condition of a rule: what it asks and whether it holds. A soft clause is reported but never
// decides whether its rule holds.
type Clause struct {
	Desc string
	OK   bool
	Soft bool
}

// Holds reports whether every clause that is not soft holds.
func Holds(clauses []Clause) bool {
	for _, c := range clauses {
		if !c.Soft && !c.OK {
			return false
		}
	}
	return true
}

// Row is a policy's behaviour on held-out tasks as the chapter's tables print it: the pass rate and the reads,
// tests, edits and turns per episode.
type Row struct {
	Pass, Reads, Tests, Edits, Turns float64
}

// slack absorbs the display rounding of printed values at a threshold.
const slack = 1e-9

// Num formats a threshold as the rules' descriptions do.
func Num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

func clause(desc string, ok bool) Clause { return Clause{Desc: desc, OK: ok} }

// AtMost is the clause "name ≤ hi".
func AtMost(name string, x, hi float64) Clause {
	return clause(fmt.Sprintf("%s ≤ %s", name, Num(hi)), x <= hi+slack)
}

// AtLeast is the clause "name ≥ lo".
func AtLeast(name string, x, lo float64) Clause {
	return clause(fmt.Sprintf("%s ≥ %s", name, Num(lo)), x >= lo-slack)
}

// Within is the clause "name in [lo, hi]".
func Within(name string, x, lo, hi float64) Clause {
	return clause(fmt.Sprintf("%s in [%s, %s]", name, Num(lo), Num(hi)), x >= lo-slack && x <= hi+slack)
}

// Near is the clause "name centre ± tol".
func Near(name string, x, centre, tol float64) Clause {
	return clause(fmt.Sprintf("%s %s ± %s", name, Num(centre), Num(tol)), math.Abs(x-centre) <= tol+slack)
}

// around reports whether a step is within five of centre: the report's reading of "around step centre" on a
// figure's 5-step averages. A step that never came (+Inf) is not.
func around(step, centre float64) bool { return math.Abs(step-centre) <= 5 }

// C8: under a 0.05 step cost the outcome (GRPO) arm drops the useless test, in its training batches of steps 30–39
// and on held-out tasks.
func C8(trainTests, heldOutTests float64) []Clause {
	return []Clause{
		AtMost("train tests (the cost removes the useless test)", trainTests, 0.15),
		AtMost("held-out tests", heldOutTests, 0.15),
	}
}

// C10: all three credit arms read, and the outcome arm tests and lasts no longer than the critic arms (held out);
// softly, the critic arms pass about as often.
func C10(outcome, token, turn Row) []Clause {
	return []Clause{
		clause("all three arms read (held-out reads ≥ 0.85)", min(outcome.Reads, token.Reads, turn.Reads) >= 0.85-slack),
		clause("outcome arm's held-out tests ≤ min(critic arms) + 0.05", outcome.Tests <= min(token.Tests, turn.Tests)+0.05+slack),
		clause("outcome arm's turns ≤ min(critic arms) + 0.05", outcome.Turns <= min(token.Turns, turn.Turns)+0.05+slack),
		{Desc: "critic arms' pass ≥ outcome pass − 0.05", OK: min(token.Pass, turn.Pass) >= outcome.Pass-0.05-slack, Soft: true},
	}
}

// C12: the default run keeps its free test.
func C12(tests float64) []Clause {
	return []Clause{AtLeast("tests (the free test habit survives)", tests, 0.40)}
}

// C14: under a 0.3 step cost the policy submits at once, with its batch reward of steps 30–39 about −0.3.
func C14(r Row, reward float64) []Clause {
	return []Clause{
		AtMost("pass", r.Pass, 0.01),
		AtMost("reads, tests, edits", max(r.Reads, r.Tests, r.Edits), 0.02),
		Within("turns", r.Turns, 1.00, 1.05),
		Within("batch reward", reward, -0.32, -0.29),
	}
}

// C15: the 3-turn arm is either (a) the book's blind guesser (no reads, an edit, about two turns, the blind pass
// rate held out, a batch reward of steps 30–39 about 0.18, and a training pass whose 5-step average from step 10
// never rises more than 0.05 above the best blind op's pass on the training tasks) or (b) a reader that passes at
// most 0.50. The clause names the regime.
func C15(r Row, reward, trainPeak, ceiling float64) Clause {
	blind := r.Reads <= 0.05+slack && r.Edits >= 0.90-slack && r.Turns >= 1.9-slack && r.Turns <= 2.2+slack &&
		math.Abs(r.Pass-0.20) <= 0.04+slack && math.Abs(reward-0.18) <= 0.05+slack && trainPeak <= ceiling+0.05+slack
	reader := r.Reads >= 0.5-slack && r.Pass <= 0.50+slack
	regime := "neither regime"
	switch {
	case blind:
		regime = "regime (a) blind guesser"
	case reader:
		regime = "regime (b) reader"
	}
	return clause("(a) blind guesser or (b) reader: "+regime, blind || reader)
}

// IsReader reports whether a 3-turn arm reads (C15's regime (b)), which exempts it from Figure 12.2's guesser
// curves (F2b).
func IsReader(r Row) bool { return r.Reads >= 0.5-slack }

// C19: masking the observations of all but the last call (keep_obs=1) halves the full-context policy's tests and
// shortens its episodes at an unchanged pass rate; softly, it reads more.
func C19(full, masked Row) []Clause {
	return []Clause{
		clause("|pass − C18 pass| ≤ 0.08", math.Abs(masked.Pass-full.Pass) <= 0.08+slack),
		clause("tests ≤ 0.5 × C18 tests", masked.Tests <= 0.5*full.Tests+slack),
		{Desc: "reads > C18 reads", OK: masked.Reads > full.Reads, Soft: true},
		clause("turns < C18 turns", masked.Turns < full.Turns),
	}
}

// C21: the keep_obs=1 policy breaks under the full context (passes 0.10 less, takes 0.8 more turns), by more than
// masking costs the full-context policy (the asymmetry), given the full-context policy under both contexts.
func C21(maskedFull, maskedOwn, full, fullMasked Row) []Clause {
	return []Clause{
		clause("pass ≤ C22 pass − 0.10", maskedFull.Pass <= maskedOwn.Pass-0.10+slack),
		clause("turns ≥ C22 turns + 0.8", maskedFull.Turns >= maskedOwn.Turns+0.8-slack),
		clause("asymmetry: (C22 − C21) > (C18 − C19) + 0.1", maskedOwn.Pass-maskedFull.Pass > full.Pass-fullMasked.Pass+0.1),
	}
}

// C23: without observations (keep_obs=0) the keep_obs=1 policy passes almost nothing.
func C23(pass float64) []Clause { return []Clause{AtMost("pass", pass, 0.05)} }

// C27: RL barely changes the malformed-call rate: per turn in steps 35–39 against steps 0–4.
func C27(start, end float64) []Clause {
	ratio := end / start
	return []Clause{
		clause("C27/C26 in [0.4, 1.1] (RL barely removes format errors)", ratio >= 0.4-slack && ratio <= 1.1+slack),
		AtLeast("malformed per turn", end, 0.005),
	}
}

// C28: the multi-turn policy fails single-turn tasks and does not read there.
func C28(single Row) []Clause {
	return []Clause{AtMost("single-turn pass", single.Pass, 0.05), AtMost("single-turn reads", single.Reads, 0.05)}
}

// C32: under a 0.3 step cost the turns per episode by 10-step window fall to one call and stay there, the last
// window agreeing with the held-out turns (C14's).
func C32(windows [4]float64, heldOutTurns float64) []Clause {
	return []Clause{
		Within("window 1", windows[0], 1.2, 2.6),
		AtMost("windows 2–4", max(windows[1], windows[2], windows[3]), 1.10),
		clause("agrees with C14: window 4 within 0.05 of C14's held-out turns", math.Abs(windows[3]-heldOutTurns) <= 0.05+slack),
	}
}

// C34: the never-submit run (a wrong submission scored −1) stalls: its lowest submit rate over steps 5–15 falls
// to 0.30 or less, and 0.30 or more below step 0's.
func C34(lowest, step0 float64) []Clause {
	return []Clause{clause("stall: min submit over steps 5–15 ≤ 0.30 and ≤ step-0 submit − 0.30",
		lowest <= 0.30+slack && lowest <= step0-0.30+slack)}
}

// F2a (Figure 12.2): under a 0.3 step cost the turns (5-step average) are down to 1.10 by step 15, before the pass
// rate (5-step average) rises 0.10 above its start; each argument is the first step it happens.
func F2a(turnsDown, passUp float64) []Clause {
	return []Clause{
		clause("turns (5-step average) down to 1.10 by step 15", turnsDown <= 15),
		clause("before the pass rate rises 0.10 above its start", turnsDown < passUp),
	}
}

// F2b (Figure 12.2): the 3-turn arm's reads (5-step average) are down to 0.05 by step 15 and its training pass
// (5-step average) stays in [0.10, 0.30] over steps 10–39. A reader (IsReader) is not held to it.
func F2b(readsDown, passLow, passHigh float64) []Clause {
	return []Clause{
		clause("reads (5-step average) down to 0.05 by step 15", readsDown <= 15),
		clause("pass (5-step average) in [0.10, 0.30] over steps 10–39 (the reading run reached 0.41)",
			passLow >= 0.10-slack && passHigh <= 0.30+slack),
	}
}

// F2c (Figure 12.2): the default run's reads (5-step average) overshoot, peaking around step 12 at least 0.10
// above their mean over steps 30–39, which settles at about one.
func F2c(peak, peakStep, settled float64) []Clause {
	return []Clause{
		clause("overshoot: reads (5-step average) peak at step 12 ± 5, at least 0.10 above steps 30–39",
			around(peakStep, 12) && peak >= settled+0.10-slack),
		Within("settle: reads over steps 30–39", settled, 0.85, 1.20),
	}
}

// Cheap is what F2d reads off Figure 12.2's 0.05-cost curves (5-step averages): the step its reads reach 0.85,
// its tests at step 0 and at their peak, the default's tests at step 0 and at that peak's step, and the step its
// tests fall to 0.15 after the peak.
type Cheap struct {
	ReadsUp                 float64
	TestsStart, TestsPeak   float64
	DefaultStart, DefaultAt float64
	TestsDown               float64
}

// F2d (Figure 12.2): under a 0.05 step cost reads come only around step 25; the tests first rise with the
// default's, then collapse around step 27.
func F2d(c Cheap) []Clause {
	return []Clause{
		clause("reads (5-step average) up to 0.85 at step 25 ± 5", around(c.ReadsUp, 25)),
		clause("tests rise with the default's: its peak ≥ its start + 0.10, and the default's then ≥ its start + 0.10",
			c.TestsPeak >= c.TestsStart+0.10-slack && c.DefaultAt >= c.DefaultStart+0.10-slack),
		clause("tests collapse (down to 0.15 after the peak) at step 27 ± 5", around(c.TestsDown, 27)),
	}
}
