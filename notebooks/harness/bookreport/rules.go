package bookreport

import (
	"maps"
	"math"

	"github.com/agentrl-go/agentrl/internal/targets"
)

// The acceptance rules of the book's printed lines (booklines.tsv), keyed by ID. A rule reads the line's values
// (ruleCtx.v), other lines' (ruleCtx.of) and auxiliary lines' (ruleCtx.aux), and adds its checks; C11, the table
// header, has none.

// printedRules returns the rules of every printed line.
func printedRules() map[string]func(*ruleCtx) {
	rules := map[string]func(*ruleCtx){}
	for _, section := range []func() map[string]func(*ruleCtx){
		rules121, rules122, rules123, rules124, rules125, rules126, rules127, neverSubmitRules,
	} {
		maps.Copy(rules, section())
	}
	return rules
}

// rules121 returns the rules of §12.1: gradient by owner (16 episodes), context growth with the turn budget (160
// episodes).
func rules121() map[string]func(*ruleCtx) {
	return map[string]func(*ruleCtx){
		"C1": func(c *ruleCtx) {
			c.check("1", "with gradient = 0", c.v(1) == 0)
			c.in("2", "count (3–8 per episode × 16)", c.v(0), 48, 128)
		},
		"C2": func(c *ruleCtx) {
			c.check("1", "with gradient = 0", c.v(1) == 0)
			c.check("R", "count (book 96 = 8 × prompt tokens of the two tasks)", true)
			c.check("1", "count = 8 × Σ prompt tokens of our two tasks (the book's tasks are not ours)",
				c.v(0) == 8*(c.aux("owner totals", 2)+c.aux("owner totals", 3)))
		},
		"C3": func(c *ruleCtx) {
			c.check("1", "with gradient = predicted", c.v(1) == c.v(0))
			c.check("1", "predicted = Σ action_mask", c.v(0) == c.aux("owner totals", 1))
			c.near("2", "count", c.v(0), 201, 50)
		},
		"C4": func(c *ruleCtx) {
			c.check("1", "with gradient = 0", c.v(1) == 0)
			c.in("2", "count (491 ± 40%)", c.v(0), 491*0.6, 491*1.4)
			c.check("3", "tool is the largest owner class", c.v(0) > max(c.of("C1", 0), c.of("C2", 0), c.of("C3", 0)))
			c.check("3", "non-policy total > policy total", c.of("C1", 0)+c.of("C2", 0)+c.v(0) > c.of("C3", 0))
			c.check("1", "the four counts sum to Σ(len(ids)−1)",
				c.of("C1", 0)+c.of("C2", 0)+c.of("C3", 0)+c.v(0) == c.aux("owner totals", 0))
		},

		"C5": func(c *ruleCtx) {
			c.le("1", "max", c.v(1), 256)
			c.near("2", "tokens", c.v(0), 38, 8)
			c.near("2", "share", c.v(2), 0.30, 0.05)
			c.le("2", "overflow", c.v(3), 0.01)
		},
		"C6": func(c *ruleCtx) {
			c.le("1", "max", c.v(1), 256)
			c.near("2", "tokens", c.v(0), 45, 9)
			c.near("2", "share", c.v(2), 0.30, 0.05)
			c.le("2", "overflow", c.v(3), 0.01)
		},
		"C7": func(c *ruleCtx) {
			c.le("1", "max", c.v(1), 256)
			c.near("2", "tokens", c.v(0), 49, 10)
			c.near("2", "share", c.v(2), 0.31, 0.05)
			c.check("2", "overflow in (0, 0.03]", c.v(3) > 0 && c.v(3) <= 0.03+1e-9)
			t6, t12 := c.of("C5", 0), c.of("C6", 0)
			c.check("3", "mean tokens do not decrease 6 → 12 → 24", t6 <= t12 && t12 <= c.v(0))
			m6, m12 := c.of("C5", 1), c.of("C6", 1)
			c.check("3", "max tokens do not decrease 6 → 12 → 24", m6 <= m12 && m12 <= c.v(1))
			s6, s12 := c.of("C5", 2), c.of("C6", 2)
			c.check("3", "share spread across C5–C7 ≤ 0.04",
				max(s6, s12, c.v(2))-min(s6, s12, c.v(2)) <= 0.04+1e-9)
			c.check("3", "overflow(24) ≥ overflow(6)", c.v(3) >= c.of("C5", 3))
		},
	}
}

// rules122 returns the rules of §12.2, the credit assignment arms. Values: train pass, train tests, held-out pass,
// reads, tests, edits, turns.
func rules122() map[string]func(*ruleCtx) {
	return map[string]func(*ruleCtx){
		"C8": func(c *ruleCtx) {
			c.nearBase(onPass, "train pass", c.v(0), 0.67, 0.10)
			c.nearBase(onPass, "held-out pass", c.v(2), 0.656, 0.10)
			c.in("2", "reads", c.v(3), 0.85, 1.20)
			c.add("2", c.v(5) > 0.95, "edits in [0.6, 0.95] (R above 0.95)", c.v(5) >= 0.60-1e-9 && c.v(5) <= 0.95+1e-9)
			c.nearBase(onTurns, "turns", c.v(6), 2.81, 0.35)
			c.rule("3", targets.C8(c.v(1), c.v(4))...)
		},
		"C9": func(c *ruleCtx) {
			c.nearBase(onPass, "train pass", c.v(0), 0.72, 0.10)
			c.check("R", "train tests (book 0.92)", true)
			c.nearBase(onPass, "held-out pass", c.v(2), 0.787, 0.10)
			c.in("2", "reads", c.v(3), 0.85, 1.20)
			c.check("R", "held-out tests (book 0.97)", true)
			c.ge("2", "edits", c.v(5), 0.85)
			c.check("R", "turns (book 4.01)", true)
		},
		"C10": func(c *ruleCtx) {
			c.nearBase(onPass, "train pass", c.v(0), 0.72, 0.10)
			c.nearBase(onPass, "held-out pass", c.v(2), 0.769, 0.10)
			c.in("2", "reads", c.v(3), 0.85, 1.20)
			c.check("R", "tests, edits, turns (book 0.29, 0.89, 3.83)", true)
			c.rule("3", targets.C10(c.row("C8", creditRow), c.row("C9", creditRow), c.row("", creditRow))...)
		},
	}
}

// rules123 returns the rules of §12.3, budgets and penalties. Values: held-out pass, reads, tests, edits, turns;
// batch reward.
func rules123() map[string]func(*ruleCtx) {
	return map[string]func(*ruleCtx){
		"C11": nil,
		"C12": func(c *ruleCtx) {
			c.nearBase(onPass, "pass", c.v(0), 0.762, 0.10)
			c.in("2", "reads", c.v(1), 0.85, 1.20)
			c.rule("3", targets.C12(c.v(2))...)
			c.ge("2", "edits", c.v(3), 0.90)
			c.nearBase(onTurns, "turns", c.v(4), 3.88, 0.40)
			c.nearBase(onPass, "reward", c.v(5), 0.71, 0.10)
			c.check("1", "reward = train pass rate at every step (12.3's identity line: cost 0, difference ≤ 1e-9)",
				c.aux("default reward identity", 0) == 0 && c.aux("default reward identity", 1) <= 1e-9)
		},
		"C13": func(c *ruleCtx) {
			same := true
			for i, j := range []int{2, 3, 4, 5, 6} { // C8's held-out fields
				same = same && c.v(i) == c.of("C8", j)
			}
			c.check("1", "held-out fields identical to C8 (same policy, same evaluation)", same)
			c.nearBase(baseShift{pass: 1, turns: -0.05}, "reward", c.v(5), 0.53, 0.10)
			// Averaged over steps 30–39 the per-step identity reads: mean reward = C8's train pass − 0.05 × the
			// run's turns in its fourth 10-step window (12.3's figure cell).
			c.check("1", "reward = pass − 0.05 × turns over steps 30–39 (C8's train pass, 12.3's turns window; to display rounding)",
				math.Abs(c.v(5)-(c.of("C8", 0)-0.05*c.aux("penalty 0.05 windows", 3))) <= r3+r2+0.05*r2+1e-9)
			c.check("1", "reward = pass − 0.05 × turns at every step (12.3's identity line: difference ≤ 1e-9)",
				c.aux("penalty 0.05 reward identity", 0) == 0.05 && c.aux("penalty 0.05 reward identity", 1) <= 1e-9)
		},
		"C14": func(c *ruleCtx) {
			c.rule("3", targets.C14(c.row("", armRow), c.v(5))...)
		},
		"C15": func(c *ruleCtx) {
			c.le("1", "turns", c.v(4), 3)
			// "Never clearly above the best blind op's ceiling over training": the highest 5-step average of the
			// training pass from step 10 (Figure 12.2's line) at most 0.05 (about two standard errors of 320 episodes)
			// above the ceiling on the training tasks.
			trainPeak, ceiling := c.aux("figure 12.2 max_turns 3", 2), c.aux("blind ceiling", 0)
			c.rule("3", targets.C15(c.row("", armRow), c.v(5), trainPeak, ceiling))
		},
	}
}

// rules124 returns the rules of §12.4, context management.
func rules124() map[string]func(*ruleCtx) {
	return map[string]func(*ruleCtx){
		"C16": func(c *ruleCtx) {
			c.check("1", "identical episodes", c.v(0) == 1)
			c.check("1", "calls = Σ calls (turns) of the 16 episodes", c.v(1) == c.aux("C16 turns", 0))
			c.near("2", "calls", c.v(1), 61, 10)
		},
		"C17": func(c *ruleCtx) {
			c.check("1", "< 1e-4 (float32)", c.v(0) < 1e-4)
		},
		"C18": func(c *ruleCtx) {
			c.nearBase(onPass, "pass", c.v(0), 0.73, 0.10)
			c.in("2", "reads", c.v(1), 0.85, 1.20)
			c.ge("2", "tests", c.v(2), 0.40)
			c.nearBase(onTurns, "turns", c.v(3), 3.87, 0.40)
		},
		"C19": func(c *ruleCtx) {
			c.rule("3", targets.C19(c.row("C18", ctxRow), c.row("", ctxRow))...)
		},
		"C20": func(c *ruleCtx) { c.le("3", "pass", c.v(0), 0.05) },
		"C21": func(c *ruleCtx) {
			c.rule("3", targets.C21(c.row("", ctxRow), c.row("C22", ctxRow), c.row("C18", ctxRow), c.row("C19", ctxRow))...)
		},
		"C22": func(c *ruleCtx) {
			c.nearBase(onPass, "pass", c.v(0), 0.79, 0.10)
			c.in("2", "reads", c.v(1), 0.85, 1.20)
			c.le("2", "tests", c.v(2), 0.15)
			c.nearBase(onTurns, "turns", c.v(3), 3.38, 0.40)
		},
		"C23": func(c *ruleCtx) { c.rule("3", targets.C23(c.v(0))...) },
	}
}

// rules125 returns the rules of §12.5, errors and early termination. Values: erred share, erred pass, overall
// pass, policy tokens per episode.
func rules125() map[string]func(*ruleCtx) {
	return map[string]func(*ruleCtx){
		"C24": func(c *ruleCtx) {
			c.in("2", "erred share", c.v(0), 0.02, 0.08)
			c.check("R", "erred pass (book 0.143; recovery possible)", true)
			c.inBase(onPass, "overall pass", c.v(2), 0.08, 0.20)
			c.near("2", "tokens", c.v(3), 12.3, 2.0)
		},
		"C25": func(c *ruleCtx) {
			c.check("1", "erred pass = 0 (by construction)", c.v(1) == 0)
			c.in("2", "erred share", c.v(0), 0.02, 0.08)
			c.inBase(onPass, "overall pass", c.v(2), 0.08, 0.20)
			c.check("3", "|overall pass − C24's| ≤ 0.06", math.Abs(c.v(2)-c.of("C24", 2)) <= 0.06+1e-9)
			t24 := c.of("C24", 3)
			c.check("3", "tokens ≤ C24's, ratio in [0.85, 1.00]",
				c.v(3) <= t24+1e-9 && c.v(3)/t24 >= 0.85-1e-9 && c.v(3)/t24 <= 1+1e-9)
		},
		"C26": func(c *ruleCtx) {
			c.in("2", "malformed per turn", c.v(0), 0.008, 0.035)
		},
		"C27": func(c *ruleCtx) {
			c.rule("3", targets.C27(c.of("C26", 0), c.v(0))...)
		},
	}
}

// rules126 returns the rules of §12.6, single- and multi-turn mixtures. Values: multi pass, multi reads, single
// pass, single reads.
func rules126() map[string]func(*ruleCtx) {
	return map[string]func(*ruleCtx){
		"C28": func(c *ruleCtx) {
			c.check("1", "multi-turn pass and reads identical to C12", c.v(0) == c.of("C12", 0) && c.v(1) == c.of("C12", 1))
			c.rule("3", targets.C28(targets.Row{Pass: c.v(2), Reads: c.v(3)})...)
		},
		"C29": func(c *ruleCtx) {
			c.nearBase(onPass, "multi-turn pass", c.v(0), 0.72, 0.10)
			c.in("2", "multi-turn reads", c.v(1), 0.85, 1.20)
			c.check("3", "single-turn pass ≥ C28 single + 0.10", c.v(2) >= c.of("C28", 2)+0.10-1e-9)
			c.near("2", "single-turn pass", c.v(2), 0.256, 0.10)
			c.soft("3", "single-turn pass above the 0.20 blind ceiling", c.v(2) > 0.20)
			c.le("3", "single-turn reads", c.v(3), 0.10)
			c.soft("3", "multi-turn pass ≤ C28 multi + 0.05", c.v(0) <= c.of("C28", 0)+0.05+1e-9)
		},
		"C30": func(c *ruleCtx) {
			c.check("1", "episode share = 0.50", c.v(0) == 0.5)
			c.check("1", "seq_mean share = 0.50", c.v(2) == 0.5)
			c.near("2", "token_mean share", c.v(1), 0.19, 0.05)
			c.check("3", "token_mean share < 0.5", c.v(1) < 0.5)
			c.check("1", "token_mean share = Σ single-turn policy tokens / Σ all policy tokens (to display rounding)",
				math.Abs(c.v(1)-c.aux("policy tokens", 0)/c.aux("policy tokens", 1)) <= r2+1e-9)
		},
	}
}

// rules127 returns the rules of §12.7's design problems but the never-submit run's (neverSubmitRules).
func rules127() map[string]func(*ruleCtx) {
	return map[string]func(*ruleCtx){
		"C31": func(c *ruleCtx) {
			c.check("1", "attempt = p − 0.3K (to display rounding)",
				math.Abs(c.v(2)-(c.v(0)-0.3*c.v(1))) <= r2+r2+0.3*r2+1e-9)
			c.check("1", "submit-now = −0.30", c.v(3) == -0.30)
			c.check("1", "equal to step 0 of the never-submit run (C33 pass, turns)",
				c.v(0) == c.of("C33", 1) && c.v(1) == c.of("C33", 3))
			same := true
			for _, arm := range []string{"default", "penalty 0.05", "penalty 0.3"} {
				same = same && c.v(0) == c.aux(arm+" step 0", 0)
			}
			c.check("1", "pass equal to step 0 of the default, penalty 0.05 and penalty 0.3 runs (12.3)", same)
			same = true
			for _, arm := range []string{"default", "penalty 0.05", "penalty 0.3"} {
				same = same && c.v(1) == c.aux(arm+" reward identity", 2)
			}
			c.check("1", "turns equal to step 0 of the default, penalty 0.05 and penalty 0.3 runs (12.3)", same)
			// The band is checked on the exact rate behind the rounded one (the step-0 batch's counts).
			pass := c.aux("step-0 batch", 0) / c.aux("step-0 batch", 1)
			c.check("1", "pass and turns = the step-0 batch's (to display rounding)",
				math.Abs(c.v(0)-pass) <= r2+1e-9 && math.Abs(c.v(1)-c.aux("step-0 batch", 4)) <= r2+r3+1e-9)
			c.nearBase(onPass, "pass (exact: passing episodes / episodes)", c.aux("step-0 batch", 0)/c.aux("step-0 batch", 1), 0.17, 0.06)
			c.nearBase(onTurns, "turns", c.v(1), 3.64, 0.40)
			c.nearBase(baseShift{pass: 1, turns: -0.3}, "attempt", c.v(2), -0.92, 0.15)
			c.check("3", "attempt < −0.30", c.v(2) < -0.30)
		},
		"C32": func(c *ruleCtx) {
			c.check("1", "four windows", len(c.self.Values) == 4)
			c.rule("3", targets.C32([4]float64{c.v(0), c.v(1), c.v(2), c.v(3)}, c.of("C14", 4))...)
			same := true
			for i := range 4 {
				same = same && math.Abs(c.v(i)-c.aux("penalty 0.3 windows", i)) <= r2+1e-9
			}
			c.check("1", "the windows 12.3 prints for the same run (to display rounding)", same)
		},
		"C42": func(c *ruleCtx) {
			c.check("1", "four windows", len(c.self.Values) == 4)
			c.check("3", "windows 2–4 ≤ window 1", max(c.v(1), c.v(2), c.v(3)) <= c.v(0)+1e-9)
			c.le("3", "window 4", c.v(3), 0.20)
			c.check("3", "window 4 ≤ never-submit run's mean submit rate over steps 30–39 − 0.30",
				c.v(3) <= c.aux("never-submit extremes", 6)-0.30+1e-9)
		},
		"C43": func(c *ruleCtx) {
			c.nearBase(onPass, "pass", c.v(0), 0.71, 0.12)
			c.nearBase(onTurns, "turns", c.v(1), 4.51, 0.50)
		},
		"C44": func(c *ruleCtx) {
			c.check("3", "pass ≤ 0.25 and ≤ C43 pass − 0.30", c.v(0) <= 0.25+1e-9 && c.v(0) <= c.of("C43", 0)-0.30+1e-9)
			c.check("3", "turns ≥ 5.3 and ≥ C43 turns + 0.8", c.v(1) >= 5.3-1e-9 && c.v(1) >= c.of("C43", 1)+0.8-1e-9)
		},
	}
}

// neverSubmitRules returns the rules of §12.7's never-submit run, printed at steps 0, 5, …, 35, 39 (C33–C41).
// Values: submit rate, pass, reward, turns.
func neverSubmitRules() map[string]func(*ruleCtx) {
	rules := map[string]func(*ruleCtx){}
	for _, id := range []string{"C33", "C34", "C35", "C36", "C37", "C38", "C39", "C40", "C41"} {
		rules[id] = func(c *ruleCtx) {
			c.check("1", "reward = 2·pass − submit (to display rounding)",
				math.Abs(c.v(2)-(2*c.v(1)-c.v(0))) <= r2+2*r2+r2+1e-9)
			switch id {
			case "C33":
				c.check("1", "pass and turns = C31", c.v(1) == c.of("C31", 0) && c.v(3) == c.of("C31", 1))
				submit := c.aux("step-0 batch", 2) / c.aux("step-0 batch", 1)
				c.check("1", "submit = the step-0 batch's (to display rounding)", math.Abs(c.v(0)-submit) <= r2+1e-9)
				c.nearBase(onSubmit, "submit", c.v(0), 0.72, 0.08)
			case "C34":
				// Over every step of 5–15 (the auxiliary line), which the printed steps 5, 10, 15 bound from above.
				minSubmit := c.aux("never-submit extremes", 0)
				c.check("1", "lowest submit over steps 5–15 ≤ those printed at steps 5, 10, 15",
					minSubmit <= min(c.v(0), c.of("C35", 0), c.of("C36", 0))+r2+1e-9)
				c.rule("3", targets.C34(minSubmit, c.of("C33", 0))...)
			case "C35":
				stallRules(c)
			case "C36":
				c.soft("3", "from step 15 on, submit − pass ≤ 0.05 (every step: the auxiliary line's largest gap)",
					c.aux("never-submit extremes", 4) <= 0.05+1e-9)
			case "C41":
				c.soft("3", "recovery: submit ≥ 0.5 and pass ≥ 0.5 at step 39", c.v(0) >= 0.5 && c.v(1) >= 0.5)
			default:
				c.check("R", "recovery trajectory", true)
			}
		}
	}
	return rules
}

// stallRules adds C35's checks of the stall over steps 5–15 (C34–C36).
func stallRules(c *ruleCtx) {
	r0, p0 := c.of("C33", 2), c.of("C33", 1)
	some := false
	for _, s := range []string{"C34", "C35", "C36"} {
		some = some || (c.of(s, 2) >= r0+0.30-1e-9 && c.of(s, 1) <= p0+0.05+1e-9)
	}
	c.check("3", "at a step in 5–15 reward ≥ step-0 reward + 0.30 while pass ≤ step-0 pass + 0.05", some)
	c.ge("3", "max turns over steps 5–15", max(c.aux("never-submit extremes", 2), c.of("C34", 3), c.of("C35", 3), c.of("C36", 3)), 5.3)
}
