package bookreport

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/agentrl-go/agentrl/internal/section"
)

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

// Resampled is the Status of a line whose only failures are class 3 checks judged by seeds (JudgeBySeeds): a
// mechanism that missed in this sample.
const Resampled = "outside rule at this seed"

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

// SectionOutput is what one section's notebooks printed, as the harness reads it (package notebooks, Sections).
type SectionOutput struct {
	Lines    []string // stdout lines of all code cells, in order
	Exists   bool     // a notebook for the section exists
	Draft    bool     // it is marked as a draft: its lines are not written yet, and their absence does not fail
	Numerics string   // what computed its outputs, "" if its metadata does not say
}

// Evaluate builds the report from what each section printed (keyed by section, "12.1").
func Evaluate(sections map[string]SectionOutput) *Report {
	rep := &Report{byID: map[string]*LineResult{}, Numerics: map[string][]string{}, sectionNumerics: map[string]string{}}
	for _, sec := range slices.SortedFunc(maps.Keys(sections), section.Compare) {
		if so := sections[sec]; so.Exists {
			n := cmp.Or(so.Numerics, "unrecorded")
			rep.Numerics[n] = append(rep.Numerics[n], sec)
			rep.sectionNumerics[sec] = n
		}
	}
	for _, bl := range slices.Concat(BookLines(), Claims()) {
		rep.Lines = append(rep.Lines, match(bl, sections[bl.Section]))
	}
	for i := range rep.Lines {
		rep.byID[rep.Lines[i].ID] = &rep.Lines[i]
	}
	rep.readAux(sections)
	devs := deviations()
	for i := range rep.Lines {
		if r := &rep.Lines[i]; r.Found && r.rule != nil {
			rep.apply(r, devs)
		}
	}
	return rep
}

// match finds book line bl among the lines its section printed: the first that matches its template is ours,
// any further one is kept in Again. A claim's rule reads other lines, so it is found when its section exists.
func match(bl BookLine, sec SectionOutput) LineResult {
	r := LineResult{BookLine: bl, Gates: sec.Exists && !sec.Draft}
	if bl.re == nil {
		r.Found = sec.Exists
		return r
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
	return r
}

// readAux reads the auxiliary lines' values and text, and notes those that a written notebook did not print.
func (rep *Report) readAux(sections map[string]SectionOutput) {
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
}

// apply evaluates r's rule and marks each failing check that devs documents (keyed "ID: description") as a known
// deviation when the failure is within the deviation's bound, or as beyond it.
func (rep *Report) apply(r *LineResult, devs map[string]Deviation) {
	c := &ruleCtx{rep: rep, self: r}
	r.rule(c)
	if r.re == nil {
		r.Ours = strings.Join(c.shown, "\n")
	}
	for j := range c.checks {
		dev, ok := devs[r.ID+": "+c.checks[j].Desc]
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

// MarkResampled says that the report reads another realization of the chapter than the committed one: outputs
// computed under other Numerics (another processor, XLA_FLAGS or backend), where the runs diverge and each
// mechanism check meets another sample of its run. The report says so, and judges its mechanisms by seeds
// (JudgeBySeeds); class 1 checks, missing lines and auxiliary lines still gate.
func (rep *Report) MarkResampled() {
	rep.Resampled = true
	rep.JudgeBySeeds()
}

// JudgeBySeeds makes the report's class 3 (mechanism) checks report-only: a run, on any processor, is one sample
// of each mechanism, which is judged by its count over seeds (SixSeeds, the report's six-seed table), so its miss
// at the printed seed is reported, not gating. The chapter's harness judges every run so; the rules' own tests
// judge single lines strictly.
func (rep *Report) JudgeBySeeds() {
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

// StaleDeviations lists the KnownDeviations entries (those Evaluate applied) that no failing check of the report matches.
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
	for key := range deviations() {
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
