package bookreport

import (
	"fmt"
	"maps"
	"math"

	"github.com/agentrl-go/agentrl/internal/targets"
)

// The rules of the claims the targets read off the chapter's figures and prose (claims.tsv), keyed by ID. A
// claim's rule records what it read (ruleCtx.show: the report's "ours") and adds its checks.

// claimRules returns the rules of every claim.
func claimRules() map[string]func(*ruleCtx) {
	rules := figureRules()
	maps.Copy(rules, proseRules())
	maps.Copy(rules, restatedRules())
	return rules
}

// figureRules returns the rules of the claims the targets read off the figures 12.1–12.3 (F1…F3).
func figureRules() map[string]func(*ruleCtx) {
	return map[string]func(*ruleCtx){
		"F1": figure121,
		"F2a": func(c *ruleCtx) {
			c.show("figure 12.2 penalty 0.3")
			turnsAt, passAt := c.aux("figure 12.2 penalty 0.3", 0), c.aux("figure 12.2 penalty 0.3", 1)
			c.rule("3", targets.F2a(turnsAt, passAt)...)
		},
		"F2b": func(c *ruleCtx) {
			c.show("figure 12.2 max_turns 3")
			if targets.IsReader(c.row("C15", armRow)) {
				c.check("R", "our arm is a reader (C15's regime (b)): the book's guesser curves do not apply", true)
				return
			}
			v := func(i int) float64 { return c.aux("figure 12.2 max_turns 3", i) }
			c.rule("3", targets.F2b(v(0), v(1), v(2))...)
		},
		"F2c": func(c *ruleCtx) {
			c.show("figure 12.2 default")
			peak, at, settled := c.aux("figure 12.2 default", 0), c.aux("figure 12.2 default", 1), c.aux("figure 12.2 default", 2)
			c.rule("3", targets.F2c(peak, at, settled)...)
			c.check("R", "peak height (book about 1.4)", true)
		},
		"F2d": func(c *ruleCtx) {
			c.show("figure 12.2 penalty 0.05")
			v := func(i int) float64 { return c.aux("figure 12.2 penalty 0.05", i) }
			c.rule("3", targets.F2d(targets.Cheap{ReadsUp: v(0), TestsStart: v(1), TestsPeak: v(2), DefaultAt: v(4),
				DefaultStart: v(5), TestsDown: v(6)})...)
		},
		"F3": func(c *ruleCtx) {
			p := func(id string) float64 { return c.of(id, 0) }
			c.show(fmt.Sprintf("held-out pass, evaluated None / 1 / 0: trained full %.3f / %.3f / %.3f; trained keep_obs=1 %.3f / %.3f / %.3f",
				c.of("C18", 0), c.of("C19", 0), c.of("C20", 0), c.of("C21", 0), c.of("C22", 0), c.of("C23", 0)))
			c.missing, c.foreign = "", ""
			c.check("3", "the full row passes most under the full context", p("C18") >= max(p("C19"), p("C20")))
			c.check("3", "the keep_obs=1 row passes most under keep_obs=1", p("C22") >= max(p("C21"), p("C23")))
			c.check("3", "the keep_obs=1 row drops by ≥ 0.10 under the full context", p("C22")-p("C21") >= 0.10-1e-9)
			c.check("3", "the keep_obs=0 column passes ≤ 0.05", max(p("C20"), p("C23")) <= 0.05+1e-9)
		},
	}
}

// figure121 checks Figure 12.1's episode (F1) on the lines its cell prints, one per call.
func figure121(c *ruleCtx) {
	c.show("figure 12.1 calls")
	vals := c.auxAll("figure 12.1 calls") // per call: k, r, V, δ, A, spread
	const width = 6
	calls := len(vals) / width
	ok := calls > 0 && len(vals)%width == 0
	for k := range calls {
		ok = ok && vals[k*width] == float64(k)
	}
	c.check("1", "calls 0, 1, …, K−1 in order", ok)
	if !ok {
		return
	}
	at := func(k, i int) float64 { return vals[k*width+i] }
	rewards, td, gae := true, true, true
	nextV, nextA := 0.0, 0.0
	for k := calls - 1; k >= 0; k-- {
		want := -0.05
		if k == calls-1 {
			want = 0.95 // the successful episode's verdict, less the call's cost
		}
		rewards = rewards && math.Abs(at(k, 1)-want) <= r3+1e-9
		td = td && math.Abs(at(k, 3)-(at(k, 1)+nextV-at(k, 2))) <= 4*r3+1e-9
		gae = gae && math.Abs(at(k, 4)-(at(k, 3)+0.95*nextA)) <= r3+1.95*r3+1e-9
		nextV, nextA = at(k, 2), at(k, 4)
	}
	c.check("1", "r_k = −0.05 per call, +1 on the last (a success)", rewards)
	c.check("1", "δ_k = r_k + V_{k+1} − V_k with V_K = 0 (to display rounding)", td)
	c.check("1", "A_k = δ_k + 0.95·A_{k+1} with A_K = 0 (γ = 1, λ = 0.95; to display rounding)", gae)
	c.check("R", "the calls, signs and sizes (one episode, one critic)", true)
}

// proseRules returns the rules of the numbers the chapter's prose states that no printed line restates (P1…P6).
func proseRules() map[string]func(*ruleCtx) {
	return map[string]func(*ruleCtx){
		"P1": func(c *ruleCtx) {
			c.check("R", "configuration: we follow the code (60 Adam steps on 480 episodes, 12.2's WarmCritic)", true)
		},
		"P2": func(c *ruleCtx) {
			c.show("critic explained variance")
			c.check("R", "explained variance (the book does not print its own)", !math.IsNaN(c.aux("critic explained variance", 0)))
		},
		"P3": func(c *ruleCtx) {
			c.show("blind ceiling")
			c.check("R", "our task set is our own, so the ceiling is reported (book 0.200)", !math.IsNaN(c.aux("blind ceiling", 1)))
		},
		"P4": func(c *ruleCtx) {
			c.show("3-turn seeds")
			vals := c.auxAll("3-turn seeds") // per seed: seed, pass, reads, tests, edits, turns, malformed, reward
			readers, best := 0, 0.0
			for i := 0; i+8 <= len(vals); i += 8 {
				if vals[i+2] >= 0.5 {
					readers, best = readers+1, max(best, vals[i+1])
				}
			}
			c.check("R", fmt.Sprintf("justifies C15's two regimes; readers among our %d seeds: %d (best held-out pass %.3f)",
				len(vals)/8, readers, best), true)
		},
		"P5": func(c *ruleCtx) {
			saved := 1 - c.of("C25", 3)/c.of("C24", 3)
			c.show(fmt.Sprintf("1 − C25/C24 policy tokens = %.3f", saved))
			c.in("2", "tokens saved", saved, 0, 0.15)
		},
		"P6": func(c *ruleCtx) {
			erred, n := c.aux("step-0 batch", 3), c.aux("step-0 batch", 1)
			c.show(fmt.Sprintf("step-0 batch: %.0f of %.0f episodes with a malformed call", erred, n))
			c.in("2", "episodes with a malformed call (the calibration gate)", erred/n, 0.02, 0.08)
		},
	}
}

// restatedRules returns the rules of the prose's numbers that restate printed lines (P7…P10): the row shows ours,
// the lines' rules check them.
func restatedRules() map[string]func(*ruleCtx) {
	restates := func(lines string, ours func(c *ruleCtx) string) func(*ruleCtx) {
		return func(c *ruleCtx) {
			c.show(ours(c))
			c.check("R", "the same quantity as "+lines+" (checked there)", true)
		}
	}
	return map[string]func(*ruleCtx){
		"P7": restates("C31", func(c *ruleCtx) string {
			return fmt.Sprintf("C31: pass %.2f", c.of("C31", 0))
		}),
		"P8": restates("C5–C7", func(c *ruleCtx) string {
			return fmt.Sprintf("C5–C7: policy share %.2f, %.2f, %.2f", c.of("C5", 2), c.of("C6", 2), c.of("C7", 2))
		}),
		"P9": restates("C1–C4", func(c *ruleCtx) string {
			return fmt.Sprintf("C1–C4: %.0f against %.0f", c.of("C3", 0), c.of("C1", 0)+c.of("C2", 0)+c.of("C4", 0))
		}),
		"P10": restates("C17", func(c *ruleCtx) string {
			return fmt.Sprintf("C17: %.1e", c.of("C17", 0))
		}),
	}
}
