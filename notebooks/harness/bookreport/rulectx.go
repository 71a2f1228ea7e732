package bookreport

import (
	"fmt"
	"math"

	"github.com/agentrl-go/agentrl/internal/targets"
)

// ruleCtx evaluates one line's rule.
type ruleCtx struct {
	rep     *Report
	self    *LineResult
	checks  []Check
	missing string // a line referred to by the check being built that is missing
	// foreign is a line of another section, computed under other numerics, that the check being built reads
	// (Check.Incomparable). Like missing, it covers the lines read since the previous check.
	foreign string
	shown   []string // for a claim: what it read (its Ours)
}

// read notes that the check being built reads a line of section sec (id names it in the report).
func (c *ruleCtx) read(id, sec string) {
	if sec == c.self.Section || c.foreign != "" {
		return
	}
	if here, there := c.rep.sectionNumerics[c.self.Section], c.rep.sectionNumerics[sec]; here != there && there != "" {
		c.foreign = fmt.Sprintf("%s of §%s, computed under other numerics (%s) than §%s (%s)", id, sec, there,
			c.self.Section, here)
	}
}

// show records, for a claim, a line it read: an auxiliary line's text (by ID) or a summary.
func (c *ruleCtx) show(s string) {
	if texts, ok := c.rep.auxText[s]; ok {
		c.shown = append(c.shown, texts...)
		return
	}
	c.shown = append(c.shown, s)
}

// auxAll returns all values of auxiliary line id (every line of a Multi line); when it is missing the next
// check is marked not applicable.
func (c *ruleCtx) auxAll(id string) []float64 {
	c.read("auxiliary line "+id, auxSection(id))
	vals, ok := c.rep.aux[id]
	if !ok {
		c.missing = "auxiliary line " + id
	}
	return vals
}

// v returns value i of the line itself.
func (c *ruleCtx) v(i int) float64 {
	if i >= len(c.self.Values) {
		return math.NaN()
	}
	return c.self.Values[i]
}

// aux returns value i of auxiliary line id; when that line is missing the next check is marked not applicable
// (and Failures names the line if its notebook is written).
func (c *ruleCtx) aux(id string, i int) float64 {
	c.read("auxiliary line "+id, auxSection(id))
	vals, ok := c.rep.aux[id]
	if !ok || i >= len(vals) {
		c.missing = "auxiliary line " + id
		return math.NaN()
	}
	return vals[i]
}

// of returns value i of line id; when that line is missing the next check is marked not applicable.
func (c *ruleCtx) of(id string, i int) float64 {
	r := c.rep.byID[id]
	if r != nil {
		c.read(id, r.Section)
	}
	if r == nil || !r.Found || i >= len(r.Values) {
		c.missing = id
		return math.NaN()
	}
	return r.Values[i]
}

func (c *ruleCtx) add(class string, soft bool, desc string, ok bool) {
	ch := Check{Class: class, Soft: soft, Desc: desc, OK: ok, Incomparable: c.foreign}
	c.foreign = ""
	if c.missing != "" {
		ch.NA, ch.Needs, ch.OK = true, c.missing, false
		c.missing = ""
	}
	c.checks = append(c.checks, ch)
}

// check adds a check of the given class.
func (c *ruleCtx) check(class, desc string, ok bool) { c.add(class, false, desc, ok) }

// rule adds clauses built by internal/targets (a rule cmd/seeds decides too, or one band) as checks of the given
// class; when a line they read is missing, every clause is marked not applicable.
func (c *ruleCtx) rule(class string, clauses ...targets.Clause) {
	missing, foreign := c.missing, c.foreign
	for _, cl := range clauses {
		c.missing, c.foreign = missing, foreign
		c.add(class, cl.Soft, cl.Desc, cl.OK)
	}
}

// Where a line's values put a policy's held-out pass rate, reads, tests, edits and turns (-1: not printed).
var (
	creditRow = [5]int{2, 3, 4, 5, 6}  // §12.2's credit arms
	armRow    = [5]int{0, 1, 2, 3, 4}  // §12.3's arms
	ctxRow    = [5]int{0, 1, 2, -1, 3} // §12.4's context grid
)

// row reads a policy's held-out statistics from line id ("" for the line itself) at the positions at.
func (c *ruleCtx) row(id string, at [5]int) targets.Row {
	var v [5]float64
	for i, j := range at {
		switch {
		case j < 0:
			v[i] = math.NaN()
		case id == "":
			v[i] = c.v(j)
		default:
			v[i] = c.of(id, j)
		}
	}
	return targets.Row{Pass: v[0], Reads: v[1], Tests: v[2], Edits: v[3], Turns: v[4]}
}

// soft adds a check that is reported but never gates.
func (c *ruleCtx) soft(class, desc string, ok bool) { c.add(class, true, desc, ok) }

// in adds lo ≤ x ≤ hi (with a little slack for printed rounding), worded as internal/targets words its rules.
func (c *ruleCtx) in(class, name string, x, lo, hi float64) {
	c.rule(class, targets.Within(name, x, lo, hi))
}

// near adds |x − centre| ≤ tol.
func (c *ruleCtx) near(class, name string, x, centre, tol float64) {
	c.rule(class, targets.Near(name, x, centre, tol))
}

// le adds x ≤ hi.
func (c *ruleCtx) le(class, name string, x, hi float64) { c.rule(class, targets.AtMost(name, x, hi)) }

// ge adds x ≥ lo.
func (c *ruleCtx) ge(class, name string, x, lo float64) { c.rule(class, targets.AtLeast(name, x, lo)) }

// baseShift says how a class 2 band moves when re-centred on our base agent: by pass·Δpass + turns·Δturns +
// submit·Δsubmit, where Δ is our base agent's step-0 statistic less the book's (the calibration gate's pass 0.17,
// turns 3.64, submit rate 0.72). A pass rate moves with the base's pass rate, turns with its turns, the
// reward of a run with a step cost k with pass − k·turns.
type baseShift struct{ pass, turns, submit float64 }

var (
	onPass   = baseShift{pass: 1}
	onTurns  = baseShift{turns: 1}
	onSubmit = baseShift{submit: 1}
)

// recentring returns the shift of a band under s, from the step-0 batch's auxiliary line; false if it is missing.
func (c *ruleCtx) recentring(s baseShift) (float64, bool) {
	v, ok := c.rep.aux["step-0 batch"]
	if !ok || len(v) < 5 || v[1] <= 0 {
		return 0, false
	}
	return s.pass*(v[0]/v[1]-0.17) + s.turns*(v[4]-3.64) + s.submit*(v[2]/v[1]-0.72), true
}

// nearBase is near for a class 2 band on a quantity the calibration gate measures; the check also carries the
// band re-centred on our base agent.
func (c *ruleCtx) nearBase(s baseShift, name string, x, centre, tol float64) {
	c.near("2", name, x, centre, tol)
	if d, ok := c.recentring(s); ok {
		ch := &c.checks[len(c.checks)-1]
		ch.Recentred = fmt.Sprintf("%s ± %s", fmtNum(centre+d), fmtNum(tol))
		ch.RecentredOK = !ch.NA && math.Abs(x-(centre+d)) <= tol+1e-9
	}
}

// inBase is in for a class 2 band on a quantity the calibration gate measures, as nearBase.
func (c *ruleCtx) inBase(s baseShift, name string, x, lo, hi float64) {
	c.in("2", name, x, lo, hi)
	if d, ok := c.recentring(s); ok {
		ch := &c.checks[len(c.checks)-1]
		ch.Recentred = fmt.Sprintf("[%s, %s]", fmtNum(lo+d), fmtNum(hi+d))
		ch.RecentredOK = !ch.NA && x >= lo+d-1e-9 && x <= hi+d+1e-9
	}
}

// fmtNum formats a number as the rules' descriptions do.
func fmtNum(x float64) string { return targets.Num(x) }
