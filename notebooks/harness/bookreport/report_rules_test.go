package bookreport

import (
	"slices"
	"strings"
	"testing"
)

// The gating checks (class 1 and 3, not soft) one by one: each case perturbs the book's own line(s) minimally so
// that exactly the named check of the named line fails, and its boundary twin, just inside the threshold, passes.
// The audit of report.go found that most of these checks had no failing test case.

// ruleEdit is one minimal perturbation of a book line (or an auxiliary line's example): the substring Old of
// line ID becomes New.
type ruleEdit struct{ ID, Old, New string }

// rulePerturbed returns the replacement lines of bookSections for the edits; Old must occur exactly once in the book's
// line, so a change of the book's text is noticed rather than silently leaving the line unperturbed.
func rulePerturbed(t *testing.T, edits ...ruleEdit) map[string]string {
	t.Helper()
	book := map[string]string{}
	for _, bl := range BookLines() {
		book[bl.ID] = bl.Book
	}
	for _, al := range AuxLines() {
		book[al.ID] = al.Example
	}
	out := map[string]string{}
	for _, e := range edits {
		line, ok := out[e.ID]
		if !ok {
			line, ok = book[e.ID]
		}
		if !ok {
			t.Fatalf("no book line %s", e.ID)
		}
		if n := strings.Count(line, e.Old); n != 1 {
			t.Fatalf("%s: %q occurs %d times in %q", e.ID, e.Old, n, line)
		}
		out[e.ID] = strings.Replace(line, e.Old, e.New, 1)
	}
	return out
}

// ruleCheckNamed returns the one check of line r whose description contains desc.
func ruleCheckNamed(t *testing.T, r *LineResult, desc string) (Check, bool) {
	t.Helper()
	var found []Check
	for _, c := range r.Checks {
		if strings.Contains(c.Desc, desc) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Errorf("%s: %d checks contain %q, want 1; checks %+v", r.ID, len(found), desc, r.Checks)
		return Check{}, false
	}
	return found[0], true
}

// ruleEval evaluates the book's lines with the edits applied and checks that every perturbed line parses.
func ruleEval(t *testing.T, edits []ruleEdit) *Report {
	t.Helper()
	rep := Evaluate(bookSections(rulePerturbed(t, edits...)))
	for _, e := range edits {
		if _, aux := rep.aux[e.ID]; aux {
			continue
		}
		if r := rep.byID[e.ID]; r == nil || !r.Found {
			t.Fatalf("%s: perturbed line does not parse", e.ID)
		}
	}
	return rep
}

// ruleOthersPass checks that no book line fails except id and those in mayFail (lines that refer to a perturbed
// line and fail with it by construction).
func ruleOthersPass(t *testing.T, rep *Report, id string, mayFail []string) {
	t.Helper()
	for _, r := range rep.Lines {
		if r.ID == id || slices.Contains(mayFail, r.ID) {
			continue
		}
		if r.Failed() {
			t.Errorf("%s fails too (status %q, ours %q); the perturbation is not confined to %s", r.ID, r.Status(), r.Ours, id)
		}
	}
}

func TestRuleGatingChecksFail(t *testing.T) {
	withoutKnownDeviations(t)
	for _, tc := range []struct {
		name    string
		id      string // the line whose check fails
		check   string // a substring of that check's description
		edits   []ruleEdit
		mayFail []string // other lines that fail with it by construction
	}{
		// §12.1 gradient by owner.
		{"C2 prompt gradient", "C2", "with gradient = 0", []ruleEdit{{"C2", "gradient    0", "gradient    1"}}, nil},
		{"C4 tool gradient", "C4", "with gradient = 0", []ruleEdit{{"C4", "gradient    0", "gradient    1"}}, nil},
		// C2's count is report-only, so it moves freely; a tie is not "largest".
		// The totals line moves with a count: the four counts sum to the predicted positions (870 in the book).
		{"C4 tool not largest", "C4", "tool is the largest owner class", []ruleEdit{{"C4", "positions  491", "positions  201"},
			{"owner totals", "870 predicted", "580 predicted"}}, nil},
		// With non-negative counts "tool largest" implies "non-policy > policy"; only a negative count separates them.
		{"C4 non-policy not above policy", "C4", "non-policy total > policy total",
			[]ruleEdit{{"C2", "positions   96", "positions -400"}, {"owner totals", "870 predicted", "374 predicted"},
				{"owner totals", "6 and 6", "-25 and -25"}}, nil},

		// What the counts add up to (12.1's totals line), the per-step reward identities (12.3), C16's turns (12.4).
		{"C2 prompt count", "C2", "8 × Σ prompt tokens", []ruleEdit{{"owner totals", "6 and 6", "6 and 7"}}, nil},
		{"C3 action mask", "C3", "Σ action_mask", []ruleEdit{{"owner totals", "201 in the", "200 in the"}}, nil},
		{"C4 sum of the counts", "C4", "sum to Σ(len(ids)−1)", []ruleEdit{{"owner totals", "870 predicted", "871 predicted"}}, nil},
		{"C12 reward per step", "C12", "at every step", []ruleEdit{{"default reward identity", "0.0e+00", "1.0e-03"}}, nil},
		{"C13 reward per step", "C13", "at every step", []ruleEdit{{"penalty 0.05 reward identity", "0.0e+00", "1.0e-03"}}, nil},
		{"C16 calls and turns", "C16", "Σ calls", []ruleEdit{{"C16 turns", "61", "60"}}, nil},
		{"C31 step-0 turns", "C31", "turns equal to step 0", []ruleEdit{{"penalty 0.3 reward identity", "turns 3.64", "turns 3.65"}}, nil},

		{"C15 guesser above the blind ceiling in training", "C15", "blind guesser or",
			[]ruleEdit{{"figure 12.2 max_turns 3", "to 0.24", "to 0.26"}}, nil},

		// §12.1 context growth.
		{"C6 max over the window", "C6", "max ≤ 256", []ruleEdit{{"C6", "(max 182)", "(max 257)"}},
			[]string{"C7"}}, // C7's max (249) is now below C6's
		{"C7 max over the window", "C7", "max ≤ 256", []ruleEdit{{"C7", "(max 249)", "(max 257)"}}, nil},
		{"C7 mean tokens decrease", "C7", "mean tokens do not decrease", []ruleEdit{{"C7", "49.3", "45.2"}}, nil},
		{"C7 mean tokens decrease 6→12", "C7", "mean tokens do not decrease", []ruleEdit{{"C5", "38.0", "45.4"}}, nil},
		{"C7 max tokens decrease", "C7", "max tokens do not decrease", []ruleEdit{{"C7", "(max 249)", "(max 181)"}}, nil},
		{"C7 max tokens decrease 6→12", "C7", "max tokens do not decrease", []ruleEdit{{"C5", "(max 144)", "(max 183)"}}, nil},
		{"C7 share spread", "C7", "share spread", []ruleEdit{{"C7", "share 0.31", "share 0.35"}}, nil},
		{"C7 share spread from C5", "C7", "share spread", []ruleEdit{{"C5", "share 0.30", "share 0.26"}}, nil},
		{"C7 overflow below C5's", "C7", "overflow(24) ≥ overflow(6)", []ruleEdit{{"C5", "overflow 0.00", "overflow 0.02"}}, nil},

		// §12.2 credit assignment.
		{"C8 train tests", "C8", "train tests", []ruleEdit{{"C8", "tests 0.01 | held-out", "tests 0.16 | held-out"}}, nil},
		// C13 prints the same held-out evaluation, so it is perturbed alike.
		{"C8 held-out tests", "C8", "held-out tests", []ruleEdit{
			{"C8", "tests 0.01 | edits", "tests 0.16 | edits"}, {"C13", "0.01   0.78", "0.16   0.78"}}, nil},
		{"C10 all arms read", "C10", "all three arms read", []ruleEdit{{"C10", "reads 1.02", "reads 0.84"}}, nil},
		{"C10 all arms read (outcome arm)", "C10", "all three arms read", []ruleEdit{
			{"C8", "reads 1.01", "reads 0.84"}, {"C13", "1.01   0.01", "0.84   0.01"}}, nil},
		{"C10 outcome tests above critic arms", "C10", "held-out tests ≤ min(critic arms)", []ruleEdit{
			{"C8", "tests 0.01 | edits", "tests 0.06 | edits"}, {"C13", "0.01   0.78", "0.06   0.78"},
			{"C10", "tests 0.29", "tests 0.00"}}, nil},
		{"C10 outcome turns above critic arms", "C10", "turns ≤ min(critic arms)", []ruleEdit{{"C10", "turns 3.83", "turns 2.75"}}, nil},

		// §12.3 budgets and penalties.
		{"C12 tests", "C12", "tests", []ruleEdit{{"C12", "0.80", "0.39"}}, nil},
		{"C14 turns above", "C14", "turns", []ruleEdit{{"C14", "1.00 |", "1.06 |"}}, nil},
		{"C14 turns below", "C14", "turns", []ruleEdit{{"C14", "1.00 |", "0.99 |"}}, nil},
		{"C14 reward above", "C14", "batch reward", []ruleEdit{{"C14", "-0.302", "-0.280"}}, nil},
		{"C14 reward below", "C14", "batch reward", []ruleEdit{{"C14", "-0.302", "-0.330"}}, nil},
		{"C14 reads", "C14", "reads, tests, edits", []ruleEdit{{"C14", "0.000   0.00", "0.000   0.03"}}, nil},
		{"C14 tests", "C14", "reads, tests, edits", []ruleEdit{{"C14", "0.00   0.00   1.00", "0.03   0.00   1.00"}}, nil},
		{"C14 edits", "C14", "reads, tests, edits", []ruleEdit{{"C14", "0.00   1.00", "0.03   1.00"}}, nil},

		// §12.4 context management.
		{"C19 tests not halved", "C19", "tests ≤ 0.5 × C18", []ruleEdit{{"C19", "tests 0.05", "tests 0.42"}}, nil},
		{"C19 pass below C18's", "C19", "|pass − C18 pass|", []ruleEdit{{"C19", "pass 0.725", "pass 0.650"}}, nil},
		{"C19 pass above C18's", "C19", "|pass − C18 pass|", []ruleEdit{{"C19", "pass 0.725", "pass 0.812"}},
			[]string{"F3"}}, // Figure 12.3: the full row no longer passes most under the full context
		{"C19 turns not below C18's", "C19", "turns < C18", []ruleEdit{{"C19", "turns 3.39", "turns 3.87"}}, nil},
		{"C20 pass", "C20", "pass", []ruleEdit{{"C20", "pass 0.006", "pass 0.051"}}, []string{"F3"}},
		{"C23 pass", "C23", "pass", []ruleEdit{{"C23", "pass 0.006", "pass 0.051"}}, []string{"F3"}},
		// Raising C19's pass (still within 0.08 of C18's) leaves the asymmetry intact while C21 nears C22.
		{"C21 pass near C22's", "C21", "pass ≤ C22 pass", []ruleEdit{
			{"C19", "pass 0.725", "pass 0.800"}, {"C21", "pass 0.500", "pass 0.695"}}, []string{"F3"}},
		{"C21 turns near C22's", "C21", "turns ≥ C22 turns", []ruleEdit{{"C21", "turns 5.29", "turns 4.17"}}, nil},
		{"C21 no asymmetry", "C21", "asymmetry", []ruleEdit{{"C21", "pass 0.500", "pass 0.690"}}, nil},

		// §12.5 errors.
		{"C27 ratio above", "C27", "C27/C26", []ruleEdit{{"C27", "0.0138", "0.0208"}}, nil},
		{"C27 ratio below", "C27", "C27/C26", []ruleEdit{{"C27", "0.0138", "0.0075"}}, nil},
		{"C27 floor", "C27", "malformed per turn ≥", []ruleEdit{{"C26", "0.0189", "0.0080"}, {"C27", "0.0138", "0.0049"}}, nil},

		// §12.6 mixtures.
		{"C29 single-turn pass not above C28's", "C29", "single-turn pass ≥ C28", []ruleEdit{{"C29", "single-turn pass 0.256", "single-turn pass 0.099"}}, nil},
		{"C29 single-turn pass not above C28's (C28 moved)", "C29", "single-turn pass ≥ C28", []ruleEdit{
			{"C28", "single-turn pass 0.000", "single-turn pass 0.050"}, {"C29", "single-turn pass 0.256", "single-turn pass 0.149"}}, nil},
		{"C29 single-turn reads", "C29", "single-turn reads", []ruleEdit{{"C29", "(reads 0.03)", "(reads 0.11)"}}, nil},
		{"C30 episode share", "C30", "episode share", []ruleEdit{{"C30", "episodes 0.50", "episodes 0.51"}}, nil},
		{"C30 token_mean share", "C30", "token_mean share <", []ruleEdit{{"C30", "token_mean 0.19", "token_mean 0.50"},
			{"policy tokens", "76 single-turn", "200 single-turn"}}, nil},
		{"C30 token_mean share off the token count", "C30", "Σ single-turn policy tokens", []ruleEdit{{"C30", "token_mean 0.19", "token_mean 0.25"}}, nil},

		// §12.7 design problems.
		{"C44 turns below C43 + 0.8", "C44", "turns ≥ 5.3", []ruleEdit{{"C44", "turns 5.84", "turns 5.30"}}, nil},
		{"C44 turns below 5.3", "C44", "turns ≥ 5.3", []ruleEdit{{"C43", "turns 4.51", "turns 4.10"}, {"C44", "turns 5.84", "turns 5.29"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := ruleEval(t, tc.edits)
			r := rep.byID[tc.id]
			if !r.Found {
				t.Fatalf("%s not found", tc.id)
			}
			if s := r.Status(); s != "FAIL" || !r.Failed() {
				t.Errorf("%s %q: status %q, failed %v; want FAIL", tc.id, r.Ours, s, r.Failed())
			}
			want, ok := ruleCheckNamed(t, r, tc.check)
			if !ok {
				return
			}
			if want.OK || want.NA || !want.Gating() {
				t.Errorf("%s %q: check %q OK %v NA %v gating %v; want a gating failure", tc.id, r.Ours, want.Desc, want.OK, want.NA, want.Gating())
			}
			for _, c := range r.Checks {
				if c.Desc == want.Desc || !c.Gating() {
					continue
				}
				if !c.OK || c.NA {
					t.Errorf("%s %q: another gating check fails too: [%s] %s (NA %v)", tc.id, r.Ours, c.Class, c.Desc, c.NA)
				}
			}
			found := false
			for _, f := range rep.Failures() {
				found = found || strings.HasPrefix(f, tc.id+" ")
			}
			if !found {
				t.Errorf("%s missing from Failures %v", tc.id, rep.Failures())
			}
			ruleOthersPass(t, rep, tc.id, tc.mayFail)
		})
	}
}

// TestRuleBoundaries puts a value just inside (or on) a gating threshold: the check passes and no line fails. Each
// case is the twin of a failing case of TestRuleGatingChecksFail, one printed unit away.
func TestRuleBoundaries(t *testing.T) {
	withoutKnownDeviations(t)
	for _, tc := range []struct {
		name  string
		id    string
		check string
		edits []ruleEdit
	}{
		{"C4 tool just largest", "C4", "tool is the largest owner class", []ruleEdit{{"C4", "positions  491", "positions  202"},
			{"owner totals", "870 predicted", "581 predicted"}}},
		{"C15 guesser at the blind ceiling + 0.05 in training", "C15", "blind guesser or",
			[]ruleEdit{{"figure 12.2 max_turns 3", "to 0.24", "to 0.25"}}},
		{"C7 max 256", "C7", "max ≤ 256", []ruleEdit{{"C7", "(max 249)", "(max 256)"}}},
		{"C7 mean tokens equal C6's", "C7", "mean tokens do not decrease", []ruleEdit{{"C7", "49.3", "45.3"}}},
		{"C7 max tokens equal C6's", "C7", "max tokens do not decrease", []ruleEdit{{"C7", "(max 249)", "(max 182)"}}},
		{"C7 share spread 0.04", "C7", "share spread", []ruleEdit{{"C7", "share 0.31", "share 0.34"}}},
		{"C7 overflow equal C5's", "C7", "overflow(24) ≥ overflow(6)", []ruleEdit{{"C5", "overflow 0.00", "overflow 0.01"}}},
		{"C8 train tests 0.15", "C8", "train tests", []ruleEdit{{"C8", "tests 0.01 | held-out", "tests 0.15 | held-out"}}},
		{"C10 reads 0.85", "C10", "all three arms read", []ruleEdit{{"C10", "reads 1.02", "reads 0.85"}}},
		{"C10 outcome tests at critic + 0.05", "C10", "held-out tests ≤ min(critic arms)", []ruleEdit{
			{"C8", "tests 0.01 | edits", "tests 0.05 | edits"}, {"C13", "0.01   0.78", "0.05   0.78"},
			{"C10", "tests 0.29", "tests 0.00"}}},
		{"C10 outcome turns at critic + 0.05", "C10", "turns ≤ min(critic arms)", []ruleEdit{{"C10", "turns 3.83", "turns 2.76"}}},
		{"C12 tests 0.40", "C12", "tests", []ruleEdit{{"C12", "0.80", "0.40"}}},
		{"C14 turns 1.05", "C14", "turns", []ruleEdit{{"C14", "1.00 |", "1.05 |"}}},
		{"C14 reward -0.29", "C14", "batch reward", []ruleEdit{{"C14", "-0.302", "-0.290"}}},
		{"C14 reward -0.32", "C14", "batch reward", []ruleEdit{{"C14", "-0.302", "-0.320"}}},
		{"C14 edits 0.02", "C14", "reads, tests, edits", []ruleEdit{{"C14", "0.00   1.00", "0.02   1.00"}}},
		{"C19 tests half of C18's", "C19", "tests ≤ 0.5 × C18", []ruleEdit{{"C19", "tests 0.05", "tests 0.41"}}},
		{"C19 pass 0.080 below C18's", "C19", "|pass − C18 pass|", []ruleEdit{{"C19", "pass 0.725", "pass 0.651"}}},
		{"C19 turns just below C18's", "C19", "turns < C18", []ruleEdit{{"C19", "turns 3.39", "turns 3.86"}}},
		{"C20 pass 0.05", "C20", "pass", []ruleEdit{{"C20", "pass 0.006", "pass 0.050"}}},
		{"C23 pass 0.05", "C23", "pass", []ruleEdit{{"C23", "pass 0.006", "pass 0.050"}}},
		{"C21 pass C22's − 0.10", "C21", "pass ≤ C22 pass", []ruleEdit{
			{"C19", "pass 0.725", "pass 0.800"}, {"C21", "pass 0.500", "pass 0.694"}}},
		{"C21 turns C22's + 0.8", "C21", "turns ≥ C22 turns", []ruleEdit{{"C21", "turns 5.29", "turns 4.18"}}},
		{"C21 asymmetry just held", "C21", "asymmetry", []ruleEdit{{"C21", "pass 0.500", "pass 0.687"}}},
		{"C27 ratio just below 1.1", "C27", "C27/C26", []ruleEdit{{"C27", "0.0138", "0.0207"}}},
		{"C27 ratio just above 0.4", "C27", "C27/C26", []ruleEdit{{"C27", "0.0138", "0.0076"}}},
		{"C27 floor 0.005", "C27", "malformed per turn ≥", []ruleEdit{{"C26", "0.0189", "0.0080"}, {"C27", "0.0138", "0.0050"}}},
		{"C29 single-turn pass C28's + 0.10", "C29", "single-turn pass ≥ C28", []ruleEdit{{"C29", "single-turn pass 0.256", "single-turn pass 0.100"}}},
		{"C29 single-turn reads 0.10", "C29", "single-turn reads", []ruleEdit{{"C29", "(reads 0.03)", "(reads 0.10)"}}},
		{"C30 token_mean share 0.49", "C30", "token_mean share <", []ruleEdit{{"C30", "token_mean 0.19", "token_mean 0.49"},
			{"policy tokens", "76 single-turn", "196 single-turn"}}},
		{"C44 turns C43's + 0.8", "C44", "turns ≥ 5.3", []ruleEdit{{"C44", "turns 5.84", "turns 5.31"}}},
		{"C44 turns 5.3", "C44", "turns ≥ 5.3", []ruleEdit{{"C43", "turns 4.51", "turns 4.10"}, {"C44", "turns 5.84", "turns 5.30"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := ruleEval(t, tc.edits)
			r := rep.byID[tc.id]
			if c, ok := ruleCheckNamed(t, r, tc.check); ok && (!c.OK || c.NA) {
				t.Errorf("%s %q: check %q fails (NA %v) at the boundary", tc.id, r.Ours, c.Desc, c.NA)
			}
			if r.Failed() {
				t.Errorf("%s %q: status %q at the boundary", tc.id, r.Ours, r.Status())
			}
			ruleOthersPass(t, rep, tc.id, boundaryMayFail[tc.name])
		})
	}
}

// boundaryMayFail names, per case of TestRuleBoundaries, the claims that fail with its edits by construction.
var boundaryMayFail = map[string][]string{
	// C19 above C18 keeps the asymmetry; the full row of Figure 12.3 then passes most under keep_obs=1.
	"C21 pass C22's − 0.10": {"F3"},
}
