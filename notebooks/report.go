package notebooks

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentrl-go/agentrl/internal/targets"
)

// The book-vs-run report: for each printed line C1…C44 of the reproduction targets (testdata/reproduction-targets.md
// at the repository's root, the contract these rules implement), find our printed line in the section's
// notebooks, extract its values and evaluate the acceptance rule; then evaluate the claims the targets read off
// the figures and the prose (F1…F3, P1…P10, Claims) on lines the notebooks print.
//
// Classes: "1" structural/exact and "3" qualitative/mechanism gate the test; "2" bands are reported (a base agent
// that misses the calibration gate re-centres them); "R" is report-only. A check marked soft (the targets say
// "soft") is reported but does not gate. Rules that need data the line does not print (Σ action_mask, per-step
// histories) are listed under Unchecked.

// BookLine is one printed line of the book, or one claim the book makes of a figure or in its prose (Claims).
type BookLine struct {
	ID      string
	Section string
	Book    string         // the line as the book prints it; for a claim, the claim and the book's values
	re      *regexp.Regexp // matches our line; captures the values (nil for a claim)
	rule    func(*ruleCtx) // appends checks
	// Source is "" for a printed line, else where the targets take the claim from: "Figure 12.2", "prose".
	Source string
	// Unchecked names parts of the acceptance rule that cannot be evaluated from printed lines.
	Unchecked string
}

// Check is one evaluated part of an acceptance rule.
type Check struct {
	Class string // "1", "2", "3" or "R"
	Soft  bool   // reported, never gating
	Desc  string
	OK    bool
	NA    bool   // a line it refers to is missing
	Needs string // the missing line
	// Incomparable names a line of another section that the check reads and that was computed under other numerics
	// than the line itself (some notebooks executed here, some committed from another realization): lines of two
	// realizations are not comparable, so the check is reported as such, never as a failure. "" when every line it
	// reads comes from one realization.
	Incomparable string
	Known        string // why this failing check is a documented known deviation (KnownDeviations), or ""
	// Beyond is the bound of a KnownDeviations entry that this failing check exceeds: the documented deviation
	// does not cover it, and it fails.
	Beyond string
	// Resampled marks a class 3 check of a report on another realization than the committed one (see
	// Report.MarkResampled): its failure is reported, not gating.
	Resampled bool
	// Recentred is, for a class 2 band on a quantity the calibration gate measures (a pass rate, turns, the
	// submit rate, or a sum of them), the band moved by our base agent's difference from the book's ("0.72 ± 0.1"),
	// and RecentredOK its verdict; "" where the band is not re-centred (see recentring).
	Recentred   string
	RecentredOK bool
}

// Gating reports whether a failure of this check fails the test.
func (c Check) Gating() bool {
	return (c.Class == "1" || c.Class == "3" && !c.Resampled) && !c.Soft && c.Known == "" && c.Incomparable == ""
}

// missesResampled reports whether the check failed as a class 3 check of another realization: reported, not
// gating.
func (c Check) missesResampled() bool {
	return !c.OK && !c.NA && c.Incomparable == "" && c.Resampled && !c.Soft && c.Known == ""
}

// Resampled is the Status of a line whose only failures are class 3 checks of another realization.
const Resampled = "outside rule (another realization)"

// Deviation documents a class 1 or class 3 check that our committed run fails: why, and how far. Within is
// evaluated on the failing line; a failure outside it (Bound says what it allows) is not covered and fails the
// test like any other.
type Deviation struct {
	Why    string
	Bound  string
	Within func(c *ruleCtx) bool
}

// KnownDeviations lists the class 1 and class 3 checks that our committed run fails, keyed "ID: description".
// They are reported as known deviations instead of failing the test, so the test still fails on any other
// failure, and on a larger one than documented; an entry whose check passes (or no longer exists) is stale and
// fails the test too (TestCommittedNotebooks), so the list cannot outlive what it documents.
var KnownDeviations = map[string]Deviation{
	// Recorded in the committed run (XLA backend on the processor its notebooks' metadata names, seed 0, base agent
	// of agentrl.DefaultBaseConfig, fresh Adam per run); the seed counts are those of `go run ./cmd/seeds` on that
	// processor. See FINDINGS.md, "Where we differ from the book".
	"C15: (a) blind guesser or (b) reader: neither regime": {
		Why:   "on held-out tasks our 3-turn arm guesses blind as the book's (reads 0.00, tests 0.00, pass 0.206 against 0.200), and it mostly guesses rather than remembers (12.3's split by op: 0.23 on training tasks, 0.17 held out; its 5-step training pass from step 10 peaks at 0.26, more than 0.05 above the blind ceiling of 0.200 on the training tasks), but many of its episodes begin with a malformed call (`edit edit` and an op), so it takes 2.59 turns instead of 1.9–2.2, and its training batches of steps 30–39 earn +0.239, just above the rule's 0.18 ± 0.05; holds in none of RL seeds 0–5 (12.3's six-seed table): blind in five (turns 2.11–2.66, batch rewards +0.22–0.33), a reader passing 0.688 (above the rule's 0.50) in one; where our extra malformed calls come from: 12.5's section of that name",
		Bound: "regime (a) on held-out tasks (reads ≤ 0.05, edits ≥ 0.90, pass 0.20 ± 0.04), with turns ≤ 2.7 and batch reward ≤ 0.26",
		Within: func(c *ruleCtx) bool {
			return c.v(1) <= 0.05+1e-9 && c.v(3) >= 0.90-1e-9 && math.Abs(c.v(0)-0.20) <= 0.04+1e-9 &&
				c.v(4) <= 2.7+1e-9 && c.v(5) <= 0.26+1e-9
		},
	},
	"C32: windows 2–4 ≤ 1.1": {
		Why:   "our 0.3-cost run collapses to one call as the book's does, and stays there (no read, test or edit from step 9 on; windows 1.73, 1.02, 1.16, 1.02 turns), but in steps 22–24 a burst of malformed first calls (0.32–0.42 per turn, each followed by the submit) adds up to half a call per episode and puts window 3 at 1.16 turns; the group comparison removes it again by step 26 (window 4 1.02); holds in the other five of RL seeds 0–5 on this processor (1.01–1.04), and at seed 0 on the processor that executed the earlier committed outputs (windows 2–4 1.02, 1.04, 1.04)",
		Bound: "windows 2–4 ≤ 1.20 and window 4 ≤ 1.10",
		Within: func(c *ruleCtx) bool {
			return max(c.v(1), c.v(2), c.v(3)) <= 1.20+1e-9 && c.v(3) <= 1.10+1e-9
		},
	},
	"F2c: overshoot: reads (5-step average) peak at step 12 ± 5, at least 0.10 above steps 30–39": {
		Why:   "our default run learns to read within ten steps (0.09 reads per episode at step 0, 0.94 at step 9: 12.5's history of the same run) and then stays at about one read per episode (1.01 over steps 30–39) without overshooting: its 5-step average is highest at step 38, at 1.03. Reads above one need a second read, and our base agent never reads right after a read (probability 0.000; its demonstrations read once, first): a base agent trained from demonstrations that re-read one time in five (0.178) overshoots to 1.55 at step 12 and settles at 1.04, and does so in five of RL seeds 0–5 (`go run ./cmd/seeds -reread 0.2`), but fits the chapter's other mechanisms worse, so the notebooks keep ours (12.3's section on why our default does not overshoot); holds in none of RL seeds 0–5 (the highest 5-step average 0.94–1.03, at steps 27–38: `go run ./cmd/seeds`), nor at RL seed 0 from any of six other draws of the base agent's demonstrations (0.96–1.00: `go run ./cmd/seeds -seeds 0 -base-seed N`)",
		Bound: "no overshoot at all (the 5-step average's peak less than 0.10 above steps 30–39), reads settled in [0.85, 1.20]",
		Within: func(c *ruleCtx) bool {
			peak, settled := c.aux("figure 12.2 default", 0), c.aux("figure 12.2 default", 2)
			return peak < settled+0.10 && settled >= 0.85-1e-9 && settled <= 1.20+1e-9
		},
	},
	"F2d: reads (5-step average) up to 0.85 at step 25 ± 5": {
		Why:   "our 0.05-cost run learns to read by step 13 (5-step average 0.85), soon after the default (book: about step 25), as our runs learn to read sooner than the book's (C34's early end of the stall is the same speed); its tests go as the book's: they rise with the default's first (0.38 → 0.71 at step 9, the default's then 1.07) and fall to 0.15 by step 24 (book: after about step 27); holds in one of RL seeds 0–5 (seed 4, reads at 0.85 by step 20; the others by steps 10–24: `go run ./cmd/seeds`). The timing depends on the base agent, in part on how much a read pays it: ours makes the right edit after a read with probability 0.769; one whose mapping demonstrations apply the right op a little less often (0.702) learns to read in its 0.05 arm a few steps later or never (never at seed 0; steps 15–17 or never under RL seeds 0–5, `go run ./cmd/seeds -mapping-right 0.8`), and in none of six seeds at the book's step 25 (12.3's section on why our 0.05 penalty reads so soon); nor does it hold at RL seed 0 from any of six other draws of the base agent's demonstrations (0.85 reads at steps 10–22 or 33, or never; at step 22 in one, whose tests then fall to 0.15 only at step 37: `go run ./cmd/seeds -seeds 0 -base-seed N`)",
		Bound: "reads reach 0.85 before step 20 (sooner than the book's, not later or never)",
		Within: func(c *ruleCtx) bool {
			return c.aux("figure 12.2 penalty 0.05", 0) < 20
		},
	},
	"C34: stall: min submit over steps 5–15 ≤ 0.30 and ≤ step-0 submit − 0.30": {
		Why:   "our never-submit run stalls as the book's does (submit rate 0.72 → 0.31 at step 5 while the reward rises from −0.25 to +0.22), but its lowest submit rate over steps 5–15 is 0.3125 (step 5), just above the rule, because it learns to read and submit again sooner (0.47 at step 10, book 0.12); holds in the other five of RL seeds 0–5 (lowest 0.03–0.27)",
		Bound: "lowest submit rate over steps 5–15 ≤ 0.35 and ≤ step-0 submit − 0.30",
		Within: func(c *ruleCtx) bool {
			low := c.aux("never-submit extremes", 0)
			return low <= 0.35+1e-9 && low <= c.of("C33", 0)-0.30+1e-9
		},
	},
}

// LineResult is the report's row for one book line.
type LineResult struct {
	BookLine
	Ours   string    // our printed line ("" if missing); for a claim, what its rule read
	Values []float64 // values extracted from it
	Found  bool
	// Again holds further lines of the section that match the book line's template: the report would read
	// the first of several, so any is a failure.
	Again  []string
	Gates  bool // the line's absence fails the test (its notebook exists and is not a draft)
	Checks []Check
}

// Status is "pass", "FAIL", Resampled, "known deviation", "outside band", "report", "missing" or "missing (not
// written)".
func (r LineResult) Status() string { return r.status(false) }

// RecentredStatus is Status with each class 2 band that has a re-centred form (Check.Recentred) judged by it.
func (r LineResult) RecentredStatus() string { return r.status(true) }

func (r LineResult) status(recentred bool) string {
	if !r.Found {
		if r.Gates {
			return "missing"
		}
		return "missing (not written)"
	}
	band, onlyR, known, resampled := false, true, false, false
	for _, c := range r.Checks {
		if c.NA || c.Incomparable != "" {
			continue
		}
		resampled = resampled || c.missesResampled()
		if !c.OK && c.Known != "" {
			known = true
		}
		if c.Class != "R" && !c.Soft {
			onlyR = false
		}
		if !c.OK && c.Gating() {
			return "FAIL"
		}
		ok := c.OK
		if recentred && c.Recentred != "" {
			ok = c.RecentredOK
		}
		if !ok && c.Class == "2" && !c.Soft {
			band = true
		}
	}
	switch {
	case resampled:
		return Resampled
	case known:
		return "known deviation"
	case band:
		return "outside band"
	case onlyR && len(r.Checks) > 0:
		return "report"
	}
	return "pass"
}

// Failed reports whether the line fails the test: a gating check failed, or the line is missing from a written
// notebook.
func (r LineResult) Failed() bool {
	s := r.Status()
	return s == "FAIL" || s == "missing"
}

// Report is the evaluated list of book lines.
type Report struct {
	Lines []LineResult
	// Resampled says the outputs are another realization than the committed one (see MarkResampled).
	Resampled bool
	// Numerics maps what computed the outputs (Provenance.Numerics, "unrecorded" if a notebook does not say) to
	// the sections computed under it.
	Numerics map[string][]string
	// sectionNumerics is what computed each section's outputs (cmp.Or(Provenance.Numerics, "unrecorded")).
	sectionNumerics map[string]string
	byID            map[string]*LineResult
	// aux holds the values of the auxiliary lines found, by ID; auxMissing the auxiliary lines that a written
	// notebook did not print.
	aux        map[string][]float64
	auxText    map[string][]string // the auxiliary lines found, by ID
	auxMissing []AuxLine
}

// AuxLine is a line our notebooks print besides the book's, which the rules read for what the book's lines
// round away or leave out: the counts behind a rate, the extremes of a training history, the same run's figures
// in another section. A written notebook must print its auxiliary lines, as it must print the book's.
type AuxLine struct {
	ID, Section string
	Example     string // a line consistent with the book's printed values (for tests)
	// Multi reads every matching line, in order (the values of each appended), where others read the first;
	// Example's lines are then separated by newlines.
	Multi bool
	re    *regexp.Regexp
}

// AuxLines returns the auxiliary lines the rules read.
func AuxLines() []AuxLine {
	var lines []AuxLine
	add := func(id, sec, template, example string) {
		lines = append(lines, AuxLine{ID: id, Section: sec, Example: example, re: tmpl(template)})
	}
	// §12.1: what the owner counts add up to.
	add("owner totals", "12.1", "16 episodes: {N} predicted positions, {N} in the action mask | prompt tokens of the two tasks: {N} and {N}",
		"16 episodes: 870 predicted positions, 201 in the action mask | prompt tokens of the two tasks: 6 and 6")
	// §12.3: each arm's batch reward at every step, and its step-0 turns.
	for _, a := range []struct{ arm, cost string }{{"default", "0.00"}, {"penalty 0.05", "0.05"}, {"penalty 0.3", "0.30"}} {
		add(a.arm+" reward identity", "12.3", a.arm+" batch reward = pass - {N} x turns at every step (largest difference {N}) | step 0 turns {N}",
			a.arm+" batch reward = pass - "+a.cost+" x turns at every step (largest difference 0.0e+00) | step 0 turns 3.64")
	}
	// §12.4: the turns of C16's episodes.
	add("C16 turns", "12.4", "turns of the 16 episodes: {N}", "turns of the 16 episodes: 61")
	// §12.3: the arms' training histories (Figure 12.2's cells).
	for _, a := range []struct{ arm, example string }{
		{"default", "0.17 -> step 39 pass 0.75"}, {"penalty 0.05", "0.17 -> step 39 pass 0.66"}, {"penalty 0.3", "0.17 -> step 39 pass 0.00"},
	} {
		add(a.arm+" step 0", "12.3", a.arm+" trained: step 0 pass {N} -> step 39 pass {N}", a.arm+" trained: step 0 pass "+a.example)
	}
	add("penalty 0.05 windows", "12.3", "penalty 0.05 turns by 10-step window: {N} {N} {N} {N}",
		"penalty 0.05  turns by 10-step window: 3.52 3.30 2.95 2.82") // C8 train pass 0.67 − 0.05 × 2.82 = C13's 0.529
	add("penalty 0.3 windows", "12.3", "penalty 0.3 turns by 10-step window: {N} {N} {N} {N}",
		"penalty 0.3   turns by 10-step window: 1.82 1.02 1.01 1.01")
	// §12.6: the policy tokens behind C30's token_mean share.
	add("policy tokens", "12.6", "policy tokens of these episodes: {N} single-turn of {N}",
		"policy tokens of these episodes: 76 single-turn of 400")
	// §12.7: the step-0 batch behind C31 and C33 (the calibration gate's statistics), and the never-submit run's
	// extremes over the steps its rules name (the book's lines print every fifth step).
	add("step-0 batch", "12.7", "step-0 batch: {N} of {N} episodes pass, {N} submit, {N} make a malformed call | turns {N}, reads {N} per episode",
		"step-0 batch: 11 of 64 episodes pass, 46 submit, 3 make a malformed call | turns 3.641, reads 0.047 per episode")
	addMulti := func(id, sec, template, example string) {
		add(id, sec, template, example)
		lines[len(lines)-1].Multi = true
	}
	// §12.2: Figure 12.1's episode, one line per call.
	addMulti("figure 12.1 calls", "12.2", "call {N} {T} r {N} | V {N} | δ {N} | A {N} | token-GAE spread inside the call {N}",
		"call 0 read                   r -0.050 | V +0.572 | δ -0.116 | A +0.179 | token-GAE spread inside the call 0.060\n"+
			"call 1 edit fix_comparison    r -0.050 | V +0.506 | δ -0.031 | A +0.311 | token-GAE spread inside the call 0.170\n"+
			"call 2 test                   r -0.050 | V +0.525 | δ +0.070 | A +0.360 | token-GAE spread inside the call 0.040\n"+
			"call 3 submit                 r +0.950 | V +0.645 | δ +0.305 | A +0.305 | token-GAE spread inside the call 0.020")
	// §12.2: the critics' explained variance (the prose's "a few percent").
	add("critic explained variance", "12.2", "critic explained variance on held-out episodes: warmed-up {N} | token GAE {N} | turn GAE {N}",
		"critic explained variance on held-out episodes: warmed-up 0.040 | token GAE 0.050 | turn GAE 0.030")
	// §12.3: Figure 12.2's claims measured on its curves (5-step averages; "-" is never), and the blind ceiling.
	add("figure 12.2 default", "12.3", "default reads peak {N} at step {N} | steps 30-39 {N}",
		"default       reads peak 1.40 at step 12 | steps 30-39 1.02")
	add("figure 12.2 penalty 0.05", "12.3",
		"penalty 0.05 reads up to 0.85 at step {S} | tests from {N} peak {N} at step {N} (default then {N}, from {N}) | tests down to 0.15 at step {S}",
		"penalty 0.05  reads up to 0.85 at step 25 | tests from 0.30 peak 0.75 at step 16 (default then 0.80, from 0.30) | tests down to 0.15 at step 29")
	add("figure 12.2 penalty 0.3", "12.3", "penalty 0.3 turns down to 1.10 at step {S} | pass up by 0.10 at step {S}",
		"penalty 0.3   turns down to 1.10 at step 9 | pass up by 0.10 at step -")
	add("figure 12.2 max_turns 3", "12.3", "max_turns 3 reads down to 0.05 at step {S} | pass over steps 10-39 from {N} to {N}",
		"max_turns 3   reads down to 0.05 at step 8 | pass over steps 10-39 from 0.16 to 0.24")
	addMulti("3-turn seeds", "12.3", "RL seed {N} | {N} {N} {N} {N} {N} {N} | {N} | {T}",
		"RL seed 0      |         0.200   0.00   0.00   0.99   2.03          0.010 |       +0.181 | blind guesser\n"+
			"RL seed 1      |         0.410   0.95   0.00   0.95   2.90          0.010 |       +0.400 | reader")
	add("blind ceiling", "12.3", "blind ceiling (one op, always, without reading): best {N} of training tasks, {N} of held-out tasks",
		"blind ceiling (one op, always, without reading): best 0.200 of training tasks, 0.200 of held-out tasks")
	add("never-submit extremes", "12.7",
		"never-submit run: steps 5-15 lowest submit rate {N} (step {N}), most turns {N} (step {N}) | steps 15-39 largest submit - pass {N} (step {N}) | steps 30-39 mean submit rate {N}",
		"never-submit run: steps 5-15 lowest submit rate 0.120 (step 10), most turns 5.78 (step 10) | steps 15-39 largest submit - pass 0.020 (step 25) | steps 30-39 mean submit rate 0.660")
	return lines
}

// SectionOutput is what one section's notebooks printed.
type SectionOutput struct {
	Lines    []string // stdout lines of all code cells, in order
	Exists   bool     // a notebook for the section exists
	Draft    bool     // it carries DraftMarker
	Numerics string   // what computed its outputs (Provenance.Numerics), "" if its metadata does not say
}

// StdoutLines returns the lines a notebook's code cells printed on stdout (stream outputs only: displays and
// stderr are not read), with carriage returns resolved as a terminal would.
func StdoutLines(nb *Notebook) []string {
	var out []string
	for _, c := range nb.CodeCells() {
		var b strings.Builder
		for _, o := range c.Outputs {
			if o.Type == "stream" && o.Name == "stdout" {
				b.WriteString(string(o.Text))
			}
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if i := strings.LastIndexByte(line, '\r'); i >= 0 {
				line = line[i+1:]
			}
			out = append(out, strings.TrimRight(line, " \t"))
		}
	}
	return out
}

// Evaluate builds the report from what each section printed (keyed by section, "12.1").
func Evaluate(sections map[string]SectionOutput) *Report {
	rep := &Report{byID: map[string]*LineResult{}, Numerics: map[string][]string{}, sectionNumerics: map[string]string{}}
	for _, sec := range slices.SortedFunc(maps.Keys(sections), compareSections) {
		if so := sections[sec]; so.Exists {
			n := cmp.Or(so.Numerics, "unrecorded")
			rep.Numerics[n] = append(rep.Numerics[n], sec)
			rep.sectionNumerics[sec] = n
		}
	}
	for _, bl := range slices.Concat(BookLines(), Claims()) {
		r := LineResult{BookLine: bl}
		sec := sections[bl.Section]
		r.Gates = sec.Exists && !sec.Draft
		if bl.re == nil { // a claim: its rule reads other lines
			r.Found = sec.Exists
			rep.Lines = append(rep.Lines, r)
			continue
		}
		for _, line := range sec.Lines {
			m := bl.re.FindStringSubmatch(strings.TrimSpace(line))
			switch {
			case m == nil:
			case r.Found:
				r.Again = append(r.Again, strings.TrimSpace(line))
			default:
				r.Ours, r.Found = strings.TrimSpace(line), true
				r.Values = parseValues(m[1:])
			}
		}
		rep.Lines = append(rep.Lines, r)
	}
	for i := range rep.Lines {
		rep.byID[rep.Lines[i].ID] = &rep.Lines[i]
	}
	rep.aux, rep.auxText = map[string][]float64{}, map[string][]string{}
	for _, al := range AuxLines() {
		sec := sections[al.Section]
		found := false
		for _, line := range sec.Lines {
			if m := al.re.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				rep.aux[al.ID] = append(rep.aux[al.ID], parseValues(m[1:])...)
				rep.auxText[al.ID] = append(rep.auxText[al.ID], strings.TrimSpace(line))
				if found = true; !al.Multi {
					break
				}
			}
		}
		if !found && sec.Exists && !sec.Draft {
			rep.auxMissing = append(rep.auxMissing, al)
		}
	}
	for i := range rep.Lines {
		r := &rep.Lines[i]
		if r.Found && r.rule != nil {
			c := &ruleCtx{rep: rep, self: r}
			r.rule(c)
			if r.re == nil {
				r.Ours = strings.Join(c.shown, "\n")
			}
			for j := range c.checks {
				dev, ok := KnownDeviations[r.ID+": "+c.checks[j].Desc]
				if !ok || c.checks[j].OK || c.checks[j].NA || c.checks[j].Incomparable != "" {
					continue
				}
				if dev.Within == nil || dev.Within(&ruleCtx{rep: rep, self: r}) {
					c.checks[j].Known = dev.Why
				} else {
					c.checks[j].Beyond = dev.Bound
				}
			}
			r.Checks = c.checks
		}
	}
	return rep
}

// MarkResampled says that the report reads another realization of the chapter than the committed one: outputs
// computed under other Numerics (another processor, XLA_FLAGS or backend), where the runs diverge and each
// mechanism check meets another sample of its run. Their class 3 failures are then reported, not gating (what
// gates a mechanism is the committed run's report, TestCommittedNotebooks, and its robustness across seeds is what
// `go run ./cmd/seeds` counts); class 1 checks, missing lines and auxiliary lines still gate.
func (rep *Report) MarkResampled() {
	rep.Resampled = true
	for i := range rep.Lines {
		for j := range rep.Lines[i].Checks {
			if c := &rep.Lines[i].Checks[j]; c.Class == "3" {
				c.Resampled = true
			}
		}
	}
}

// ResampledFailures lists the lines whose status is Resampled, with their failing checks.
func (rep *Report) ResampledFailures() []string {
	var out []string
	for _, r := range rep.Lines {
		if r.Status() != Resampled {
			continue
		}
		var bad []string
		for _, c := range r.Checks {
			if c.missesResampled() {
				bad = append(bad, "class 3: "+c.Desc)
			}
		}
		out = append(out, fmt.Sprintf("%s (§%s): %q fails %s", r.ID, r.Section, r.Ours, strings.Join(bad, "; ")))
	}
	return out
}

// StaleDeviations lists the KnownDeviations entries that no failing check of the report matches.
func (rep *Report) StaleDeviations() []string {
	used := map[string]bool{}
	for _, r := range rep.Lines {
		for _, c := range r.Checks {
			if c.Known != "" {
				used[r.ID+": "+c.Desc] = true
			}
		}
	}
	var stale []string
	for key := range KnownDeviations {
		if !used[key] {
			stale = append(stale, key)
		}
	}
	sort.Strings(stale)
	return stale
}

// Complete reports whether every section of the book has a notebook that is not a draft, so that every
// KnownDeviations entry can be matched (StaleDeviations means something only then).
func (rep *Report) Complete() bool {
	for _, r := range rep.Lines {
		if !r.Gates {
			return false
		}
	}
	return true
}

// Failures lists the lines that fail the test, and the auxiliary lines that a written notebook did not print.
func (rep *Report) Failures() []string {
	var out []string
	for _, al := range rep.auxMissing {
		out = append(out, fmt.Sprintf("auxiliary line %q (§%s) not printed, e.g. %q", al.ID, al.Section, al.Example))
	}
	for _, r := range rep.Lines {
		if len(r.Again) > 0 {
			out = append(out, fmt.Sprintf("%s (§%s): printed %d times, ambiguous: %q and %q", r.ID, r.Section,
				len(r.Again)+1, r.Ours, r.Again))
		}
		if !r.Failed() {
			continue
		}
		if !r.Found {
			out = append(out, fmt.Sprintf("%s (§%s): line not printed; the book prints %q", r.ID, r.Section, r.Book))
			continue
		}
		var bad []string
		for _, c := range r.Checks {
			if !c.OK && !c.NA && c.Gating() {
				desc := fmt.Sprintf("class %s: %s", c.Class, c.Desc)
				if c.Beyond != "" {
					desc += " (beyond its documented deviation, which allows " + c.Beyond + ")"
				}
				bad = append(bad, desc)
			}
		}
		out = append(out, fmt.Sprintf("%s (§%s): %q fails %s", r.ID, r.Section, r.Ours, strings.Join(bad, "; ")))
	}
	return out
}

// parseValues turns captured groups into numbers: numbers as such (a Unicode minus accepted), True/False as
// 1/0, a bracketed list as its elements in order.
func parseValues(groups []string) []float64 {
	var vals []float64
	for _, g := range groups {
		g = strings.TrimSpace(strings.ReplaceAll(g, "−", "-"))
		switch strings.ToLower(g) {
		case "-": // a step that never came
			vals = append(vals, math.Inf(1))
			continue
		case "true":
			vals = append(vals, 1)
			continue
		case "false":
			vals = append(vals, 0)
			continue
		}
		if f, err := strconv.ParseFloat(g, 64); err == nil {
			vals = append(vals, f)
			continue
		}
		for _, part := range strings.FieldsFunc(g, func(r rune) bool { return r == ',' || r == ' ' }) {
			if f, err := strconv.ParseFloat(part, 64); err == nil {
				vals = append(vals, f)
			} else {
				vals = append(vals, math.NaN())
			}
		}
	}
	return vals
}

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

// auxSection returns the section of auxiliary line id.
func auxSection(id string) string {
	for _, al := range auxLines {
		if al.ID == id {
			return al.Section
		}
	}
	return ""
}

// auxLines is AuxLines, built once.
var auxLines = AuxLines()

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

// Display rounding: a value printed with d decimals is within half a unit of the last place.
const (
	r2 = 0.005  // two decimals
	r3 = 0.0005 // three decimals
)

// num, flag, list, step and text are the placeholders of line templates.
const (
	num  = `([-+−]?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)`
	flag = `(True|False|true|false)`
	list = `\[([^\]]*)\]`
	step = `([0-9]+|-)` // a training step, or "-" for none (parsed as +Inf)
	text = `.+?`        // any text, not captured
)

// placeholders maps each placeholder of a line template to its expression.
var placeholders = map[string]string{"{N}": num, "{B}": flag, "{L}": list, "{S}": step, "{T}": text}

// tmpl compiles a line template: {N} a number, {B} a boolean, {L} a bracketed list, {S} a step or "-", {T} any
// text (not captured); runs of spaces match any run of blanks; everything else is literal.
func tmpl(t string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for len(t) > 0 {
		if len(t) >= 3 {
			if re, ok := placeholders[t[:3]]; ok {
				b.WriteString(re)
				t = t[3:]
				continue
			}
		}
		switch {
		case t[0] == ' ':
			b.WriteString(`\s+`)
			t = strings.TrimLeft(t, " ")
		default:
			i := strings.IndexAny(t, "{ ")
			if i <= 0 {
				i = len(t)
				if j := strings.IndexAny(t[1:], "{ "); j >= 0 {
					i = j + 1
				}
			}
			b.WriteString(regexp.QuoteMeta(t[:i]))
			t = t[i:]
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// BookLines returns the 44 printed lines of the chapter with their acceptance rules, in order.
func BookLines() []BookLine {
	var lines []BookLine
	add := func(id, sec, book, template string, rule func(*ruleCtx), unchecked string) {
		lines = append(lines, BookLine{ID: id, Section: sec, Book: book, re: tmpl(template), rule: rule, Unchecked: unchecked})
	}

	// §12.1: gradient by owner (16 episodes).
	owner := func(name string) string { return name + " predicted positions {N} | with gradient {N}" }
	add("C1", "12.1", "template  predicted positions   82 | with gradient    0", owner("template"), func(c *ruleCtx) {
		c.check("1", "with gradient = 0", c.v(1) == 0)
		c.in("2", "count (3–8 per episode × 16)", c.v(0), 48, 128)
	}, "")
	add("C2", "12.1", "prompt    predicted positions   96 | with gradient    0", owner("prompt"), func(c *ruleCtx) {
		c.check("1", "with gradient = 0", c.v(1) == 0)
		c.check("R", "count (book 96 = 8 × prompt tokens of the two tasks)", true)
		c.check("1", "count = 8 × Σ prompt tokens of our two tasks (the book's tasks are not ours)",
			c.v(0) == 8*(c.aux("owner totals", 2)+c.aux("owner totals", 3)))
	}, "")
	add("C3", "12.1", "policy    predicted positions  201 | with gradient  201", owner("policy"), func(c *ruleCtx) {
		c.check("1", "with gradient = predicted", c.v(1) == c.v(0))
		c.check("1", "predicted = Σ action_mask", c.v(0) == c.aux("owner totals", 1))
		c.near("2", "count", c.v(0), 201, 50)
	}, "")
	add("C4", "12.1", "tool      predicted positions  491 | with gradient    0", owner("tool"), func(c *ruleCtx) {
		c.check("1", "with gradient = 0", c.v(1) == 0)
		c.in("2", "count (491 ± 40%)", c.v(0), 491*0.6, 491*1.4)
		c.check("3", "tool is the largest owner class", c.v(0) > max(c.of("C1", 0), c.of("C2", 0), c.of("C3", 0)))
		c.check("3", "non-policy total > policy total", c.of("C1", 0)+c.of("C2", 0)+c.v(0) > c.of("C3", 0))
		c.check("1", "the four counts sum to Σ(len(ids)−1)",
			c.of("C1", 0)+c.of("C2", 0)+c.of("C3", 0)+c.v(0) == c.aux("owner totals", 0))
	}, "")

	// §12.1: context growth with the turn budget (160 episodes).
	budget := func(n string) string {
		return "max_turns " + n + " | tokens per episode {N} (max {N}) | policy share {N} | context overflow {N}"
	}
	add("C5", "12.1", "max_turns  6 | tokens per episode  38.0 (max 144) | policy share 0.30 | context overflow 0.00",
		budget("6"), func(c *ruleCtx) {
			c.le("1", "max", c.v(1), 256)
			c.near("2", "tokens", c.v(0), 38, 8)
			c.near("2", "share", c.v(2), 0.30, 0.05)
			c.le("2", "overflow", c.v(3), 0.01)
		}, "")
	add("C6", "12.1", "max_turns 12 | tokens per episode  45.3 (max 182) | policy share 0.30 | context overflow 0.00",
		budget("12"), func(c *ruleCtx) {
			c.le("1", "max", c.v(1), 256)
			c.near("2", "tokens", c.v(0), 45, 9)
			c.near("2", "share", c.v(2), 0.30, 0.05)
			c.le("2", "overflow", c.v(3), 0.01)
		}, "")
	add("C7", "12.1", "max_turns 24 | tokens per episode  49.3 (max 249) | policy share 0.31 | context overflow 0.01",
		budget("24"), func(c *ruleCtx) {
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
		}, "")

	// §12.2: credit assignment arms. Values: train pass, train tests, held-out pass, reads, tests, edits, turns.
	credit := func(name string) string {
		return name + " train pass, steps 30-39 {N} | tests {N} | held-out: pass {N} | reads {N} | tests {N} | edits {N} | turns {N}"
	}
	add("C8", "12.2", "outcome (GRPO)  train pass, steps 30-39 0.67 | tests 0.01 | held-out: pass 0.656 | reads 1.01 | tests 0.01 | edits 0.78 | turns 2.81",
		credit("outcome (GRPO)"), func(c *ruleCtx) {
			c.nearBase(onPass, "train pass", c.v(0), 0.67, 0.10)
			c.nearBase(onPass, "held-out pass", c.v(2), 0.656, 0.10)
			c.in("2", "reads", c.v(3), 0.85, 1.20)
			c.add("2", c.v(5) > 0.95, "edits in [0.6, 0.95] (R above 0.95)", c.v(5) >= 0.60-1e-9 && c.v(5) <= 0.95+1e-9)
			c.nearBase(onTurns, "turns", c.v(6), 2.81, 0.35)
			c.rule("3", targets.C8(c.v(1), c.v(4))...)
		}, "")
	add("C9", "12.2", "token GAE       train pass, steps 30-39 0.72 | tests 0.92 | held-out: pass 0.787 | reads 1.03 | tests 0.97 | edits 0.98 | turns 4.01",
		credit("token GAE"), func(c *ruleCtx) {
			c.nearBase(onPass, "train pass", c.v(0), 0.72, 0.10)
			c.check("R", "train tests (book 0.92)", true)
			c.nearBase(onPass, "held-out pass", c.v(2), 0.787, 0.10)
			c.in("2", "reads", c.v(3), 0.85, 1.20)
			c.check("R", "held-out tests (book 0.97)", true)
			c.ge("2", "edits", c.v(5), 0.85)
			c.check("R", "turns (book 4.01)", true)
		}, "")
	add("C10", "12.2", "turn GAE        train pass, steps 30-39 0.72 | tests 0.33 | held-out: pass 0.769 | reads 1.02 | tests 0.29 | edits 0.89 | turns 3.83",
		credit("turn GAE"), func(c *ruleCtx) {
			c.nearBase(onPass, "train pass", c.v(0), 0.72, 0.10)
			c.nearBase(onPass, "held-out pass", c.v(2), 0.769, 0.10)
			c.in("2", "reads", c.v(3), 0.85, 1.20)
			c.check("R", "tests, edits, turns (book 0.29, 0.89, 3.83)", true)
			c.rule("3", targets.C10(c.row("C8", creditRow), c.row("C9", creditRow), c.row("", creditRow))...)
		}, "")

	// §12.3: budgets and penalties. Values: held-out pass, reads, tests, edits, turns; batch reward.
	add("C11", "12.3", "arm           | held-out pass  reads  tests  edits  turns | batch reward, steps 30-39",
		"arm | held-out pass reads tests edits turns | batch reward, steps 30-39", nil, "")
	arm := func(name string) string { return name + " | {N} {N} {N} {N} {N} | {N}" }
	add("C12", "12.3", "default       |         0.762   1.02   0.80   0.96   3.88 | +0.711", arm("default"), func(c *ruleCtx) {
		c.nearBase(onPass, "pass", c.v(0), 0.762, 0.10)
		c.in("2", "reads", c.v(1), 0.85, 1.20)
		c.rule("3", targets.C12(c.v(2))...)
		c.ge("2", "edits", c.v(3), 0.90)
		c.nearBase(onTurns, "turns", c.v(4), 3.88, 0.40)
		c.nearBase(onPass, "reward", c.v(5), 0.71, 0.10)
		c.check("1", "reward = train pass rate at every step (12.3's identity line: cost 0, difference ≤ 1e-9)",
			c.aux("default reward identity", 0) == 0 && c.aux("default reward identity", 1) <= 1e-9)
	}, "")
	add("C13", "12.3", "penalty 0.05  |         0.656   1.01   0.01   0.78   2.81 | +0.529", arm("penalty 0.05"), func(c *ruleCtx) {
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
	}, "")
	add("C14", "12.3", "penalty 0.3   |         0.000   0.00   0.00   0.00   1.00 | -0.302", arm("penalty 0.3"), func(c *ruleCtx) {
		c.rule("3", targets.C14(c.row("", armRow), c.v(5))...)
	}, "")
	add("C15", "12.3", "max_turns 3   |         0.200   0.00   0.00   0.99   2.03 | +0.181", arm("max_turns 3"), func(c *ruleCtx) {
		c.le("1", "turns", c.v(4), 3)
		// "Never clearly above the best blind op's ceiling over training": the highest 5-step average of the
		// training pass from step 10 (Figure 12.2's line) at most 0.05 (about two standard errors of 320 episodes)
		// above the ceiling on the training tasks.
		trainPeak, ceiling := c.aux("figure 12.2 max_turns 3", 2), c.aux("blind ceiling", 0)
		c.rule("3", targets.C15(c.row("", armRow), c.v(5), trainPeak, ceiling))
	}, "")

	// §12.4: context management.
	add("C16", "12.4", "identical episodes: True | calls: 61", "identical episodes: {B} | calls: {N}", func(c *ruleCtx) {
		c.check("1", "identical episodes", c.v(0) == 1)
		c.check("1", "calls = Σ calls (turns) of the 16 episodes", c.v(1) == c.aux("C16 turns", 0))
		c.near("2", "calls", c.v(1), 61, 10)
	}, "")
	add("C17", "12.4", "max |log p(episode) - sum of per-call log p| = 2.1e-06",
		"max |log p(episode) - sum of per-call log p| = {N}", func(c *ruleCtx) {
			c.check("1", "< 1e-4 (float32)", c.v(0) < 1e-4)
		}, "")
	ctx := func(train, eval string) string {
		return "trained " + train + " evaluated keep_obs=" + eval + " | pass {N} | reads {N} | tests {N} | turns {N}"
	}
	add("C18", "12.4", "trained full       evaluated keep_obs=None | pass 0.731 | reads 1.01 | tests 0.82 | turns 3.87",
		ctx("full", "None"), func(c *ruleCtx) {
			c.nearBase(onPass, "pass", c.v(0), 0.73, 0.10)
			c.in("2", "reads", c.v(1), 0.85, 1.20)
			c.ge("2", "tests", c.v(2), 0.40)
			c.nearBase(onTurns, "turns", c.v(3), 3.87, 0.40)
		}, "")
	add("C19", "12.4", "trained full       evaluated keep_obs=1    | pass 0.725 | reads 1.27 | tests 0.05 | turns 3.39",
		ctx("full", "1"), func(c *ruleCtx) {
			c.rule("3", targets.C19(c.row("C18", ctxRow), c.row("", ctxRow))...)
		}, "")
	add("C20", "12.4", "trained full       evaluated keep_obs=0    | pass 0.006 | reads 1.27 | tests 0.02 | turns 2.33",
		ctx("full", "0"), func(c *ruleCtx) { c.le("3", "pass", c.v(0), 0.05) }, "")
	add("C21", "12.4", "trained keep_obs=1 evaluated keep_obs=None | pass 0.500 | reads 1.04 | tests 0.07 | turns 5.29",
		ctx("keep_obs=1", "None"), func(c *ruleCtx) {
			c.rule("3", targets.C21(c.row("", ctxRow), c.row("C22", ctxRow), c.row("C18", ctxRow), c.row("C19", ctxRow))...)
		}, "")
	add("C22", "12.4", "trained keep_obs=1 evaluated keep_obs=1    | pass 0.794 | reads 1.04 | tests 0.02 | turns 3.38",
		ctx("keep_obs=1", "1"), func(c *ruleCtx) {
			c.nearBase(onPass, "pass", c.v(0), 0.79, 0.10)
			c.in("2", "reads", c.v(1), 0.85, 1.20)
			c.le("2", "tests", c.v(2), 0.15)
			c.nearBase(onTurns, "turns", c.v(3), 3.38, 0.40)
		}, "")
	add("C23", "12.4", "trained keep_obs=1 evaluated keep_obs=0    | pass 0.006 | reads 1.02 | tests 0.01 | turns 2.29",
		ctx("keep_obs=1", "0"), func(c *ruleCtx) { c.rule("3", targets.C23(c.v(0))...) }, "")

	// §12.5: errors and early termination. Values: erred share, erred pass, overall pass, policy tokens/episode.
	errs := func(name string) string {
		return name + " episodes with an error {N} | their pass rate {N} | overall pass {N} | policy tokens per episode {N}"
	}
	add("C24", "12.5", "error observation  episodes with an error 0.044 | their pass rate 0.143 | overall pass 0.131 | policy tokens per episode 12.3",
		errs("error observation"), func(c *ruleCtx) {
			c.in("2", "erred share", c.v(0), 0.02, 0.08)
			c.check("R", "erred pass (book 0.143; recovery possible)", true)
			c.inBase(onPass, "overall pass", c.v(2), 0.08, 0.20)
			c.near("2", "tokens", c.v(3), 12.3, 2.0)
		}, "")
	add("C25", "12.5", "early stop         episodes with an error 0.050 | their pass rate 0.000 | overall pass 0.144 | policy tokens per episode 11.6",
		errs("early stop"), func(c *ruleCtx) {
			c.check("1", "erred pass = 0 (by construction)", c.v(1) == 0)
			c.in("2", "erred share", c.v(0), 0.02, 0.08)
			c.inBase(onPass, "overall pass", c.v(2), 0.08, 0.20)
			c.check("3", "|overall pass − C24's| ≤ 0.06", math.Abs(c.v(2)-c.of("C24", 2)) <= 0.06+1e-9)
			t24 := c.of("C24", 3)
			c.check("3", "tokens ≤ C24's, ratio in [0.85, 1.00]",
				c.v(3) <= t24+1e-9 && c.v(3)/t24 >= 0.85-1e-9 && c.v(3)/t24 <= 1+1e-9)
		}, "")
	add("C26", "12.5", "default run, steps 0-4: malformed calls per turn 0.0189",
		"default run, steps 0-4: malformed calls per turn {N}", func(c *ruleCtx) {
			c.in("2", "malformed per turn", c.v(0), 0.008, 0.035)
		}, "")
	add("C27", "12.5", "default run, steps 35-39: malformed calls per turn 0.0138",
		"default run, steps 35-39: malformed calls per turn {N}", func(c *ruleCtx) {
			c.rule("3", targets.C27(c.of("C26", 0), c.v(0))...)
		}, "")

	// §12.6: single- and multi-turn mixtures. Values: multi pass, multi reads, single pass, single reads.
	mix := func(name string) string {
		return name + " multi-turn pass {N} (reads {N}) | single-turn pass {N} (reads {N})"
	}
	add("C28", "12.6", "multi-turn only  multi-turn pass 0.762 (reads 1.02) | single-turn pass 0.000 (reads 0.00)",
		mix("multi-turn only"), func(c *ruleCtx) {
			c.check("1", "multi-turn pass and reads identical to C12", c.v(0) == c.of("C12", 0) && c.v(1) == c.of("C12", 1))
			c.rule("3", targets.C28(targets.Row{Pass: c.v(2), Reads: c.v(3)})...)
		}, "")
	add("C29", "12.6", "50/50 mixture    multi-turn pass 0.719 (reads 1.03) | single-turn pass 0.256 (reads 0.03)",
		mix("50/50 mixture"), func(c *ruleCtx) {
			c.nearBase(onPass, "multi-turn pass", c.v(0), 0.72, 0.10)
			c.in("2", "multi-turn reads", c.v(1), 0.85, 1.20)
			c.check("3", "single-turn pass ≥ C28 single + 0.10", c.v(2) >= c.of("C28", 2)+0.10-1e-9)
			c.near("2", "single-turn pass", c.v(2), 0.256, 0.10)
			c.soft("3", "single-turn pass above the 0.20 blind ceiling", c.v(2) > 0.20)
			c.le("3", "single-turn reads", c.v(3), 0.10)
			c.soft("3", "multi-turn pass ≤ C28 multi + 0.05", c.v(0) <= c.of("C28", 0)+0.05+1e-9)
		}, "")
	add("C30", "12.6", "single-turn share of episodes 0.50 | of loss weight: token_mean 0.19, seq_mean 0.50",
		"single-turn share of episodes {N} | of loss weight: token_mean {N}, seq_mean {N}", func(c *ruleCtx) {
			c.check("1", "episode share = 0.50", c.v(0) == 0.5)
			c.check("1", "seq_mean share = 0.50", c.v(2) == 0.5)
			c.near("2", "token_mean share", c.v(1), 0.19, 0.05)
			c.check("3", "token_mean share < 0.5", c.v(1) < 0.5)
			c.check("1", "token_mean share = Σ single-turn policy tokens / Σ all policy tokens (to display rounding)",
				math.Abs(c.v(1)-c.aux("policy tokens", 0)/c.aux("policy tokens", 1)) <= r2+1e-9)
		}, "")

	// §12.7: design problems.
	add("C31", "12.7", "starting policy: pass 0.17, turns 3.64 -> attempt worth -0.92; submit at once worth -0.30",
		"starting policy: pass {N}, turns {N} -> attempt worth {N}; submit at once worth {N}", func(c *ruleCtx) {
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
		}, "")
	add("C32", "12.7", "penalty 0.3 run, turns per episode by 10-step window: [1.82, 1.02, 1.01, 1.01]",
		"penalty 0.3 run, turns per episode by 10-step window: {L}", func(c *ruleCtx) {
			c.check("1", "four windows", len(c.self.Values) == 4)
			c.rule("3", targets.C32([4]float64{c.v(0), c.v(1), c.v(2), c.v(3)}, c.of("C14", 4))...)
			same := true
			for i := range 4 {
				same = same && math.Abs(c.v(i)-c.aux("penalty 0.3 windows", i)) <= r2+1e-9
			}
			c.check("1", "the windows 12.3 prints for the same run (to display rounding)", same)
		}, "")
	// Never-submit run, steps 0, 5, …, 35, 39. Values: submit rate, pass, reward, turns.
	never := []struct {
		id, step, book string
	}{
		{"C33", "0", "step  0 | submit rate 0.72 | pass 0.17 | reward -0.38 | turns 3.64"},
		{"C34", "5", "step  5 | submit rate 0.23 | pass 0.17 | reward +0.11 | turns 5.44"},
		{"C35", "10", "step 10 | submit rate 0.12 | pass 0.11 | reward +0.09 | turns 5.78"},
		{"C36", "15", "step 15 | submit rate 0.20 | pass 0.20 | reward +0.20 | turns 5.59"},
		{"C37", "20", "step 20 | submit rate 0.41 | pass 0.41 | reward +0.41 | turns 5.19"},
		{"C38", "25", "step 25 | submit rate 0.58 | pass 0.56 | reward +0.55 | turns 4.86"},
		{"C39", "30", "step 30 | submit rate 0.59 | pass 0.59 | reward +0.59 | turns 4.83"},
		{"C40", "35", "step 35 | submit rate 0.70 | pass 0.69 | reward +0.67 | turns 4.59"},
		{"C41", "39", "step 39 | submit rate 0.73 | pass 0.73 | reward +0.73 | turns 4.53"},
	}
	stall := []string{"C34", "C35", "C36"}
	for _, n := range never {
		id := n.id
		add(id, "12.7", n.book, "step "+n.step+" | submit rate {N} | pass {N} | reward {N} | turns {N}", func(c *ruleCtx) {
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
				r0, p0 := c.of("C33", 2), c.of("C33", 1)
				some := false
				for _, s := range stall {
					some = some || (c.of(s, 2) >= r0+0.30-1e-9 && c.of(s, 1) <= p0+0.05+1e-9)
				}
				c.check("3", "at a step in 5–15 reward ≥ step-0 reward + 0.30 while pass ≤ step-0 pass + 0.05", some)
				c.ge("3", "max turns over steps 5–15", max(c.aux("never-submit extremes", 2), c.of("C34", 3), c.of("C35", 3), c.of("C36", 3)), 5.3)
			case "C36":
				c.soft("3", "from step 15 on, submit − pass ≤ 0.05 (every step: the auxiliary line's largest gap)",
					c.aux("never-submit extremes", 4) <= 0.05+1e-9)
			case "C41":
				c.soft("3", "recovery: submit ≥ 0.5 and pass ≥ 0.5 at step 39", c.v(0) >= 0.5 && c.v(1) >= 0.5)
			default:
				c.check("R", "recovery trajectory", true)
			}
		}, "")
	}
	add("C42", "12.7", "masked truncation, submit rate by 10-step window: [0.37, 0.13, 0.1, 0.09]",
		"masked truncation, submit rate by 10-step window: {L}", func(c *ruleCtx) {
			c.check("1", "four windows", len(c.self.Values) == 4)
			c.check("3", "windows 2–4 ≤ window 1", max(c.v(1), c.v(2), c.v(3)) <= c.v(0)+1e-9)
			c.le("3", "window 4", c.v(3), 0.20)
			c.check("3", "window 4 ≤ never-submit run's mean submit rate over steps 30–39 − 0.30",
				c.v(3) <= c.aux("never-submit extremes", 6)-0.30+1e-9)
		}, "")
	add("C43", "12.7", "truncation = 0     held-out pass 0.706 | turns 4.51",
		"truncation = 0 held-out pass {N} | turns {N}", func(c *ruleCtx) {
			c.nearBase(onPass, "pass", c.v(0), 0.71, 0.12)
			c.nearBase(onTurns, "turns", c.v(1), 4.51, 0.50)
		}, "")
	add("C44", "12.7", "truncation masked  held-out pass 0.075 | turns 5.84",
		"truncation masked held-out pass {N} | turns {N}", func(c *ruleCtx) {
			c.check("3", "pass ≤ 0.25 and ≤ C43 pass − 0.30", c.v(0) <= 0.25+1e-9 && c.v(0) <= c.of("C43", 0)-0.30+1e-9)
			c.check("3", "turns ≥ 5.3 and ≥ C43 turns + 0.8", c.v(1) >= 5.3-1e-9 && c.v(1) >= c.of("C43", 1)+0.8-1e-9)
		}, "")
	return lines
}

// Claims returns what the targets read off the chapter's figures (their section B) and the numbers its prose
// states (section C), with their rules. Each is evaluated on lines our notebooks print: the auxiliary lines of the
// figures' cells and the book lines above. Where the targets write "≈" and "around step s" we read: a timing
// within five steps (the targets' slack), a level within the band the printed lines use for the same quantity.
func Claims() []BookLine {
	var claims []BookLine
	add := func(id, sec, source, book string, rule func(*ruleCtx), unchecked string) {
		claims = append(claims, BookLine{ID: id, Section: sec, Source: source, Book: book, rule: rule, Unchecked: unchecked})
	}

	add("F1", "12.2", "Figure 12.1", "one successful held-out episode of the turn-GAE policy (read, edit, test, submit) scored by its own critic: "+
		"δ = −0.116, −0.031, +0.070, +0.305; A = +0.180 (read) … +0.361 (test), all positive; token-GAE spread up to 0.17 (edit)",
		func(c *ruleCtx) {
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
		}, "")

	add("F2a", "12.3", "Figure 12.2", "penalty 0.3: turns fall to about one call within about 10 steps, before the pass rate rises",
		func(c *ruleCtx) {
			c.show("figure 12.2 penalty 0.3")
			turnsAt, passAt := c.aux("figure 12.2 penalty 0.3", 0), c.aux("figure 12.2 penalty 0.3", 1)
			c.rule("3", targets.F2a(turnsAt, passAt)...)
		}, "")
	add("F2b", "12.3", "Figure 12.2", "max_turns 3: reads fall to zero within about 10 steps; the pass rate stays about 0.2",
		func(c *ruleCtx) {
			c.show("figure 12.2 max_turns 3")
			if targets.IsReader(c.row("C15", armRow)) {
				c.check("R", "our arm is a reader (C15's regime (b)): the book's guesser curves do not apply", true)
				return
			}
			v := func(i int) float64 { return c.aux("figure 12.2 max_turns 3", i) }
			c.rule("3", targets.F2b(v(0), v(1), v(2))...)
		}, "")
	add("F2c", "12.3", "Figure 12.2", "default: reads overshoot to about 1.4 around step 12, then settle at about one",
		func(c *ruleCtx) {
			c.show("figure 12.2 default")
			peak, at, settled := c.aux("figure 12.2 default", 0), c.aux("figure 12.2 default", 1), c.aux("figure 12.2 default", 2)
			c.rule("3", targets.F2c(peak, at, settled)...)
			c.check("R", "peak height (book about 1.4)", true)
		}, "")
	add("F2d", "12.3", "Figure 12.2", "penalty 0.05: about one read only around step 25; its tests first rise with the default's, "+
		"then collapse after about step 27",
		func(c *ruleCtx) {
			c.show("figure 12.2 penalty 0.05")
			v := func(i int) float64 { return c.aux("figure 12.2 penalty 0.05", i) }
			c.rule("3", targets.F2d(targets.Cheap{ReadsUp: v(0), TestsStart: v(1), TestsPeak: v(2), DefaultAt: v(4),
				DefaultStart: v(5), TestsDown: v(6)})...)
		}, "")
	add("F3", "12.4", "Figure 12.3", "each row passes most under its own training context (only weakly the full row: 0.731 against 0.725); "+
		"the masked-trained row drops sharply under the full context; the keep_obs=0 column passes about nothing",
		func(c *ruleCtx) {
			p := func(id string) float64 { return c.of(id, 0) }
			c.show(fmt.Sprintf("held-out pass, evaluated None / 1 / 0: trained full %.3f / %.3f / %.3f; trained keep_obs=1 %.3f / %.3f / %.3f",
				c.of("C18", 0), c.of("C19", 0), c.of("C20", 0), c.of("C21", 0), c.of("C22", 0), c.of("C23", 0)))
			c.missing, c.foreign = "", ""
			c.check("3", "the full row passes most under the full context", p("C18") >= max(p("C19"), p("C20")))
			c.check("3", "the keep_obs=1 row passes most under keep_obs=1", p("C22") >= max(p("C21"), p("C23")))
			c.check("3", "the keep_obs=1 row drops by ≥ 0.10 under the full context", p("C22")-p("C21") >= 0.10-1e-9)
			c.check("3", "the keep_obs=0 column passes ≤ 0.05", max(p("C20"), p("C23")) <= 0.05+1e-9)
		}, "")

	add("P1", "12.2", "prose", "critic warm-up: 60 steps, \"192 episodes\" (the book's code gives 480)",
		func(c *ruleCtx) {
			c.check("R", "configuration: we follow the code (60 Adam steps on 480 episodes, 12.2's WarmCritic)", true)
		},
		"not printed: the configuration is 12.2's chapter code")
	add("P2", "12.2", "prose", "critic explained variance: \"a few percent\"",
		func(c *ruleCtx) {
			c.show("critic explained variance")
			c.check("R", "explained variance (the book does not print its own)", !math.IsNaN(c.aux("critic explained variance", 0)))
		}, "")
	add("P3", "12.3", "prose", "best single blind op on held-out tasks: 0.200 (the blind ceiling)",
		func(c *ruleCtx) {
			c.show("blind ceiling")
			c.check("R", "our task set is our own, so the ceiling is reported (book 0.200)", !math.IsNaN(c.aux("blind ceiling", 1)))
		}, "")
	add("P4", "12.3", "prose", "max_turns 3 arm in an exploratory run: a reader at 0.41",
		func(c *ruleCtx) {
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
		}, "")
	add("P5", "12.5", "prose", "early stop saves about 6% of policy tokens",
		func(c *ruleCtx) {
			saved := 1 - c.of("C25", 3)/c.of("C24", 3)
			c.show(fmt.Sprintf("1 − C25/C24 policy tokens = %.3f", saved))
			c.in("2", "tokens saved", saved, 0, 0.15)
		}, "")
	add("P6", "12.5", "prose", "the base agent errs in about 5% of episodes",
		func(c *ruleCtx) {
			erred, n := c.aux("step-0 batch", 3), c.aux("step-0 batch", 1)
			c.show(fmt.Sprintf("step-0 batch: %.0f of %.0f episodes with a malformed call", erred, n))
			c.in("2", "episodes with a malformed call (the calibration gate)", erred/n, 0.02, 0.08)
		}, "")
	// Prose numbers that restate printed lines: the row shows ours, the lines' rules check them.
	restates := func(id, sec, book, lines string, ours func(c *ruleCtx) string) {
		add(id, sec, "prose", book, func(c *ruleCtx) {
			c.show(ours(c))
			c.check("R", "the same quantity as "+lines+" (checked there)", true)
		}, "")
	}
	restates("P7", "12.7", "starting policy success rate p ≈ 0.17", "C31", func(c *ruleCtx) string {
		return fmt.Sprintf("C31: pass %.2f", c.of("C31", 0))
	})
	restates("P8", "12.1", "policy share of BugFix tokens: 30%", "C5–C7", func(c *ruleCtx) string {
		return fmt.Sprintf("C5–C7: policy share %.2f, %.2f, %.2f", c.of("C5", 2), c.of("C6", 2), c.of("C7", 2))
	})
	restates("P9", "12.1", "policy against non-policy positions in C1–C4: 201 against 669", "C1–C4", func(c *ruleCtx) string {
		return fmt.Sprintf("C1–C4: %.0f against %.0f", c.of("C3", 0), c.of("C1", 0)+c.of("C2", 0)+c.of("C4", 0))
	})
	restates("P10", "12.4", "per-call scoring agrees to 2 × 10⁻⁶", "C17", func(c *ruleCtx) string {
		return fmt.Sprintf("C17: %.1e", c.of("C17", 0))
	})
	return claims
}

// Markdown renders the report.
func (rep *Report) Markdown(sources map[string]string) string {
	var printed, claims []LineResult
	for _, r := range rep.Lines {
		if r.Source == "" {
			printed = append(printed, r)
		} else {
			claims = append(claims, r)
		}
	}
	var b strings.Builder
	counts, cc := statusCounts(printed, LineResult.Status), statusCounts(claims, LineResult.Status)
	b.WriteString("# Chapter 12: book vs. this run\n\n")
	b.WriteString("Generated by the notebook harness (`go test ./notebooks` or `go run ./notebooks/cmd/execute`) from the\n")
	b.WriteString("notebooks' printed lines; rules from `reproduction-targets.md`. Class 1 (exact) and class 3 (mechanism)\n")
	b.WriteString("checks gate the test; class 2 bands and soft checks are reported; R is report-only.\n\n")
	fmt.Fprintf(&b, "**%d of %d book lines inside their rules** (pass %d, report-only %d); outside a class-2 band %d; "+
		"known deviation (a documented class-1/3 failure) %d; FAIL %d; missing %d; not yet written %d.\n\n",
		counts["pass"]+counts["report"], len(printed), counts["pass"], counts["report"], counts["outside band"],
		counts["known deviation"], counts["FAIL"], counts["missing"], counts["missing (not written)"])
	cal, calibrated := rep.calibration()
	if !calibrated {
		rc := statusCounts(printed, LineResult.RecentredStatus)
		d := func(s baseShift) string {
			x, ok := (&ruleCtx{rep: rep}).recentring(s)
			if !ok {
				return "?"
			}
			return strconv.FormatFloat(x, 'f', 3, 64)
		}
		fmt.Fprintf(&b, "**Re-centred on our base agent**, as the targets ask when the calibration gate misses (below): "+
			"**%d of %d inside** (pass %d, report-only %d; outside a class-2 band %d). Each band on a quantity the gate "+
			"measures moves by our base agent's difference from the book's: pass rates (and the batch reward of a run "+
			"without a step cost) by %s, turns by %s, the submit rate by %s, a reward or value p − k·turns by both; the "+
			"bands of other quantities (tokens, reads, tests, edits, shares, malformed calls, single-turn pass) stay as "+
			"the book's. The rows show both verdicts; neither gates.",
			rc["pass"]+rc["report"], len(printed), rc["pass"], rc["report"], rc["outside band"],
			d(onPass), d(onTurns), d(onSubmit))
		if c24 := rep.byID["C24"]; c24 != nil && c24.Found && len(c24.Values) > 2 {
			fmt.Fprintf(&b, " The shift rests on the gate's 64 episodes; in C24's larger sample (160 episodes of the 20 "+
				"training tasks) the same base agent passes %.3f where the book's passes 0.131, so there the two base "+
				"agents pass alike and the pass bands move further than that sample supports.", c24.Values[2])
		}
		b.WriteString("\n\n")
	}
	if len(claims) > 0 {
		fmt.Fprintf(&b, "**%d of %d claims of the figures and the prose inside their rules** (pass %d, report-only %d; "+
			"below the printed lines); outside a class-2 band %d; known deviation %d; FAIL %d; missing %d; not yet "+
			"written %d.\n\n", cc["pass"]+cc["report"], len(claims), cc["pass"], cc["report"], cc["outside band"],
			cc["known deviation"], cc["FAIL"], cc["missing"], cc["missing (not written)"])
	}
	if rep.Resampled {
		fmt.Fprintf(&b, "**Another realization:** these outputs were computed under other numerics than the committed "+
			"ones, so the runs are other samples, and class 3 failures are reported, not gating (%d lines %s).\n\n",
			counts[Resampled]+cc[Resampled], Resampled)
	}
	for _, n := range slices.Sorted(maps.Keys(rep.Numerics)) {
		fmt.Fprintf(&b, "Computed under `%s` (§%s): a run's bits depend on the backend and, on XLA, the processor "+
			"(README, Backend).\n\n", n, strings.Join(rep.Numerics[n], ", §"))
	}
	if len(sources) > 0 {
		var secs []string
		for s := range sources {
			secs = append(secs, s)
		}
		slices.Sort(secs)
		b.WriteString("Outputs read from: ")
		for i, s := range secs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "§%s %s", s, sources[s])
		}
		b.WriteString(".\n\n")
	}
	b.WriteString(cal)
	b.WriteString("| ID | § | book | ours | rule | result |\n|---|---|---|---|---|---|\n")
	for _, r := range printed {
		writeRow(&b, r, "`"+cellEscape(r.Book)+"`", !calibrated)
	}
	if len(claims) > 0 {
		b.WriteString("\n## Figures and prose\n\n")
		b.WriteString("What the targets read off the chapter's figures (their section B) and the numbers its prose states\n")
		b.WriteString("(section C), checked on the lines our notebooks print (the figures' cells print what their claims need).\n")
		b.WriteString("A timing \"around step s\" is read as s ± 5 steps on the figure's 5-step averages; \"-\" is a step that never came.\n\n")
		b.WriteString("| ID | § | book | ours | rule | result |\n|---|---|---|---|---|---|\n")
		for _, r := range claims {
			writeRow(&b, r, r.Source+": "+cellEscape(r.Book), !calibrated)
		}
	}
	b.WriteString("\nAuxiliary lines (printed by our notebooks besides the book's; the rules above read them):\n\n")
	for _, al := range AuxLines() {
		vals, ok := rep.aux[al.ID]
		got := "not printed"
		if ok {
			parts := make([]string, len(vals))
			for k, v := range vals {
				parts[k] = fmtNum(v)
			}
			got = strings.Join(parts, ", ")
		}
		fmt.Fprintf(&b, "- %s (§%s): %s\n", al.ID, al.Section, got)
	}
	return b.String()
}

// statusCounts counts the rows by status (LineResult.Status or RecentredStatus).
func statusCounts(rows []LineResult, status func(LineResult) string) map[string]int {
	counts := map[string]int{}
	for _, r := range rows {
		counts[status(r)]++
	}
	return counts
}

// writeRow renders one row of a report table; recentred adds the verdicts of the re-centred bands.
func writeRow(b *strings.Builder, r LineResult, book string, recentred bool) {
	ours := "—"
	if r.Found && r.Ours != "" {
		var parts []string
		for _, line := range strings.Split(r.Ours, "\n") {
			parts = append(parts, "`"+cellEscape(line)+"`")
		}
		ours = strings.Join(parts, "<br>")
	}
	var rule []string
	for _, c := range r.Checks {
		mark := "✓"
		switch {
		case c.NA:
			mark = "n/a (needs " + c.Needs + ")"
		case c.Incomparable != "":
			mark = "not comparable (reads " + c.Incomparable + ")"
		case !c.OK && c.Known != "":
			mark = "✗ known deviation (" + c.Known + ")"
		case c.missesResampled():
			mark = "✗ (another realization: not gating)"
		case !c.OK:
			mark = "✗"
		}
		soft := ""
		if c.Soft {
			soft = ", soft"
		}
		desc := cellEscape(c.Desc)
		if recentred && c.Recentred != "" {
			desc += fmt.Sprintf(" (re-centred %s: %s)", c.Recentred, map[bool]string{true: "✓", false: "✗"}[c.RecentredOK])
		}
		rule = append(rule, fmt.Sprintf("%s [%s%s] %s", mark, c.Class, soft, desc))
	}
	if r.Unchecked != "" {
		rule = append(rule, "unchecked: "+cellEscape(r.Unchecked))
	}
	status := r.Status()
	if status == "FAIL" || status == "missing" {
		status = "**" + status + "**"
	}
	if rs := r.RecentredStatus(); recentred && rs != r.Status() {
		status += "; re-centred: " + rs
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", r.ID, r.Section, book, ours, strings.Join(rule, "<br>"), status)
}

// Calibrated reports whether the base agent passes the targets' calibration gate (see calibration).
func (rep *Report) Calibrated() bool {
	_, ok := rep.calibration()
	return ok
}

// calibration renders the calibration gate of the targets: the port's base agent against the book's, on the
// exact statistics of the seed-0, 6-turn step-0 batch (12.7's auxiliary line), where the book's lines print
// rates rounded to two decimals. It reports whether every item is inside.
func (rep *Report) calibration() (string, bool) {
	vals, ok := rep.aux["step-0 batch"]
	if !ok || len(vals) < 6 || vals[1] <= 0 {
		return "Calibration gate: the step-0 batch's line (12.7) is missing.\n\n", false
	}
	n := vals[1]
	items := []struct {
		name   string
		x      float64
		exact  string
		lo, hi float64
	}{
		{"pass", vals[0] / n, fmt.Sprintf("%.0f/%.0f", vals[0], n), 0.11, 0.23},
		{"turns", vals[4], "", 3.2, 4.1},
		{"submit rate", vals[2] / n, fmt.Sprintf("%.0f/%.0f", vals[2], n), 0.62, 0.82},
		{"episodes with a malformed call", vals[3] / n, fmt.Sprintf("%.0f/%.0f", vals[3], n), 0.02, 0.08},
		{"reads per episode (rare)", vals[5], "", 0, 0.15},
	}
	var b strings.Builder
	b.WriteString("Calibration gate (the seed-0, 6-turn step-0 batch of the base agent; if it misses, the targets re-centre the class-2 bands on the port's own base statistics): ")
	all := true
	for i, it := range items {
		if i > 0 {
			b.WriteString("; ")
		}
		verdict := "inside"
		if it.x < it.lo-1e-9 || it.x > it.hi+1e-9 {
			verdict, all = "OUTSIDE", false
		}
		x := fmtNum(it.x)
		if it.exact != "" {
			x = it.exact + " = " + strconv.FormatFloat(it.x, 'f', 3, 64)
		}
		fmt.Fprintf(&b, "%s %s in [%s, %s]: %s", it.name, x, fmtNum(it.lo), fmtNum(it.hi), verdict)
	}
	if all {
		b.WriteString(". Inside: the class-2 bands keep the book's centres.\n\n")
	} else {
		b.WriteString(". Outside: the class-2 bands on quantities the gate measures are also drawn re-centred on our base agent (above); they never gate.\n\n")
	}
	return b.String(), all
}

func cellEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// Sections groups the notebooks' printed lines by chapter section. The draft flag and existence come from the
// notebooks themselves.
func Sections(nbs []*Notebook) map[string]SectionOutput {
	out := map[string]SectionOutput{}
	for _, nb := range nbs {
		sec := Section(nb.Path)
		so := out[sec]
		so.Exists = true
		so.Draft = so.Draft || nb.Draft()
		so.Lines = append(so.Lines, StdoutLines(nb)...)
		if prov := nb.Metadata.Agentrl; prov != nil {
			so.Numerics = prov.Numerics
		}
		out[sec] = so
	}
	return out
}
