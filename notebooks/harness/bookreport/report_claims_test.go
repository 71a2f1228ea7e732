package bookreport

import (
	"slices"
	"strings"
	"testing"
)

// TestClaims perturbs the lines a figure or prose claim reads: exactly the named checks of the claim fail (or,
// with none named, it passes), and every other line and claim still passes. Boundary cases sit on a threshold.
func TestClaims(t *testing.T) {
	withoutKnownDeviations(t)
	for _, tc := range []struct {
		name  string
		id    string
		fail  []string // substrings of the checks of id that fail; none: id passes
		edits []ruleEdit
	}{
		// Figure 12.1: the identities hold to display rounding on the printed values.
		{"F1 value off", "F1", []string{"δ_k"}, []ruleEdit{{"figure 12.1 calls", "V +0.572", "V +0.582"}}},
		{"F1 value within rounding", "F1", nil, []ruleEdit{{"figure 12.1 calls", "V +0.572", "V +0.574"}}},
		{"F1 advantage off", "F1", []string{"A_k"}, []ruleEdit{{"figure 12.1 calls", "A +0.179", "A +0.189"}}},
		{"F1 a failure", "F1", []string{"r_k", "δ_k"}, []ruleEdit{{"figure 12.1 calls", "r +0.950", "r -0.050"}}},
		{"F1 calls out of order", "F1", []string{"calls 0, 1"}, []ruleEdit{{"figure 12.1 calls", "call 2 test", "call 5 test"}}},

		// Figure 12.2, penalty 0.3.
		{"F2a turns late", "F2a", []string{"by step 15"}, []ruleEdit{{"figure 12.2 penalty 0.3", "at step 9", "at step 16"}}},
		{"F2a turns at step 15", "F2a", nil, []ruleEdit{{"figure 12.2 penalty 0.3", "at step 9", "at step 15"}}},
		{"F2a turns never", "F2a", []string{"by step 15", "before the pass"}, []ruleEdit{{"figure 12.2 penalty 0.3", "at step 9", "at step -"}}},
		{"F2a pass first", "F2a", []string{"before the pass"}, []ruleEdit{{"figure 12.2 penalty 0.3", "at step -", "at step 9"}}},

		// Figure 12.2, max_turns 3; a reader (C15's regime (b)) is not held to the guesser's curves.
		{"F2b reads late", "F2b", []string{"by step 15"}, []ruleEdit{{"figure 12.2 max_turns 3", "at step 8", "at step 16"}}},
		{"F2b pass low", "F2b", []string{"[0.10, 0.30]"}, []ruleEdit{{"figure 12.2 max_turns 3", "from 0.16", "from 0.09"}}},
		{"F2b pass high", "F2b", []string{"[0.10, 0.30]"}, []ruleEdit{{"figure 12.2 max_turns 3", "to 0.24", "to 0.31"}}},
		{"F2b pass 0.30", "F2b", nil, []ruleEdit{{"figure 12.2 max_turns 3", "to 0.24", "to 0.30"}}},
		{"F2b a reader", "F2b", nil, []ruleEdit{{"figure 12.2 max_turns 3", "to 0.24", "to 0.45"},
			{"C15", "0.200   0.00", "0.450   0.60"}}},

		// Figure 12.2, default.
		{"F2c peak late", "F2c", []string{"overshoot"}, []ruleEdit{{"figure 12.2 default", "at step 12", "at step 18"}}},
		{"F2c peak at step 17", "F2c", nil, []ruleEdit{{"figure 12.2 default", "at step 12", "at step 17"}}},
		{"F2c no overshoot", "F2c", []string{"overshoot"}, []ruleEdit{{"figure 12.2 default", "peak 1.40", "peak 1.11"}}},
		{"F2c overshoot 0.10", "F2c", nil, []ruleEdit{{"figure 12.2 default", "peak 1.40", "peak 1.12"}}},
		{"F2c settles high", "F2c", []string{"settle"}, []ruleEdit{{"figure 12.2 default", "30-39 1.02", "30-39 1.21"}}},

		// Figure 12.2, penalty 0.05.
		{"F2d reads early", "F2d", []string{"up to 0.85"}, []ruleEdit{{"figure 12.2 penalty 0.05", "at step 25", "at step 19"}}},
		{"F2d reads at step 20", "F2d", nil, []ruleEdit{{"figure 12.2 penalty 0.05", "at step 25", "at step 20"}}},
		{"F2d reads never", "F2d", []string{"up to 0.85"}, []ruleEdit{{"figure 12.2 penalty 0.05", "at step 25", "at step -"}}},
		{"F2d tests do not rise", "F2d", []string{"rise"}, []ruleEdit{{"figure 12.2 penalty 0.05", "peak 0.75", "peak 0.39"}}},
		{"F2d the default's do not", "F2d", []string{"rise"}, []ruleEdit{{"figure 12.2 penalty 0.05", "then 0.80", "then 0.39"}}},
		{"F2d collapse late", "F2d", []string{"collapse"}, []ruleEdit{{"figure 12.2 penalty 0.05", "at step 29", "at step 33"}}},
		{"F2d collapse at step 32", "F2d", nil, []ruleEdit{{"figure 12.2 penalty 0.05", "at step 29", "at step 32"}}},
		{"F2d no collapse", "F2d", []string{"collapse"}, []ruleEdit{{"figure 12.2 penalty 0.05", "at step 29", "at step -"}}},

		// Figure 12.3, from the lines of §12.4.
		{"F3 full row best elsewhere", "F3", []string{"the full row"}, []ruleEdit{{"C19", "pass 0.725", "pass 0.740"}}},
		{"F3 full row tied", "F3", nil, []ruleEdit{{"C19", "pass 0.725", "pass 0.731"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := ruleEval(t, tc.edits)
			r := rep.byID[tc.id]
			var failed []string
			for _, c := range r.Checks {
				if c.NA {
					t.Errorf("%s: check %q not applicable (needs %s)", tc.id, c.Desc, c.Needs)
				}
				if !c.OK {
					failed = append(failed, c.Desc)
				}
			}
			for _, want := range tc.fail {
				if !slices.ContainsFunc(failed, func(d string) bool { return strings.Contains(d, want) }) {
					t.Errorf("%s (ours %q): no failing check contains %q; failed %q", tc.id, r.Ours, want, failed)
				}
			}
			for _, d := range failed {
				if !slices.ContainsFunc(tc.fail, func(want string) bool { return strings.Contains(d, want) }) {
					t.Errorf("%s (ours %q): check %q fails too", tc.id, r.Ours, d)
				}
			}
			if r.Failed() != (len(tc.fail) > 0) {
				t.Errorf("%s: Failed() = %v with failing checks %q", tc.id, r.Failed(), failed)
			}
			ruleOthersPass(t, rep, tc.id, claimsMayFail[tc.name])
		})
	}
}

// claimsMayFail names, per case of TestClaims, the lines that fail with its edits by construction.
var claimsMayFail = map[string][]string{
	// A guesser passing 0.30 in training is more than 0.05 above the 0.200 blind ceiling: C15's regime (a) fails.
	"F2b pass high": {"C15"},
	"F2b pass 0.30": {"C15"},
}

func TestClaimsRenderBelowTheBookLines(t *testing.T) {
	md := Evaluate(bookSections(nil)).Markdown(nil)
	for _, want := range []string{
		"**44 of 44 book lines inside their rules**",
		"of the figures and the prose inside their rules",
		"## Figures and prose",
		"| F2c | 12.3 | Figure 12.2: default:",
		"`call 3 submit",
		"| P3 | 12.3 | prose:",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Index(md, "| C44 |") > strings.Index(md, "| F1 |") {
		t.Error("the claims are not below the book's printed lines")
	}
}

// TestRecentring: a base agent outside the calibration gate gets the class-2 bands of the quantities the gate
// measures re-centred on its own step-0 statistics, reported beside the book-centred ones; inside the gate there
// is nothing to re-centre.
func TestRecentring(t *testing.T) {
	if md := Evaluate(bookSections(nil)).Markdown(nil); strings.Contains(md, "Re-centred on our base agent") {
		t.Error("the book's own step-0 batch is inside the gate, yet the report re-centres")
	}
	// 15 of 64 pass (0.234, above the gate's 0.23): pass bands move by +0.0623 (0.2344 − 0.172 of the example).
	rep := Evaluate(bookSections(rulePerturbed(t,
		ruleEdit{"step-0 batch", "11 of 64", "15 of 64"},
		ruleEdit{"C12", "0.762", "0.869"},
	)))
	if rep.Calibrated() {
		t.Fatal("15 of 64 passing is outside the gate")
	}
	c12 := rep.byID["C12"]
	if got, want := c12.Status(), "outside band"; got != want {
		t.Errorf("C12 book-centred status %q, want %q", got, want)
	}
	if got, want := c12.RecentredStatus(), "pass"; got != want {
		t.Errorf("C12 re-centred status %q, want %q", got, want)
	}
	for _, tc := range []struct {
		id, check, recentred string
	}{
		{"C12", "pass 0.762", "0.8264 ± 0.1"},      // 0.762 + 15/64 − 0.17
		{"C12", "turns", "3.881 ± 0.4"},            // 3.88 + 3.641 − 3.64
		{"C13", "reward 0.53", "0.5943 ± 0.1"},     // 0.53 + 0.0644 − 0.05 × 0.001
		{"C31", "attempt -0.92", "-0.8559 ± 0.15"}, // −0.92 + 0.0644 − 0.3 × 0.001
		{"C33", "submit 0.72", "0.7188 ± 0.08"},    // 0.72 + 46/64 − 0.72
		{"C24", "overall pass", "[0.1444, 0.2644]"},
		{"C5", "tokens", ""}, // no statistic of the gate: not re-centred
		{"C29", "single-turn pass 0.256", ""},
	} {
		if c, ok := ruleCheckNamed(t, rep.byID[tc.id], tc.check); ok && c.Recentred != tc.recentred {
			t.Errorf("%s %q re-centred %q, want %q", tc.id, tc.check, c.Recentred, tc.recentred)
		}
	}
	md := rep.Markdown(nil)
	for _, want := range []string{"**Re-centred on our base agent**", "outside band; re-centred: pass", "(re-centred 0.8264 ± 0.1: ✓)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if c12.Failed() {
		t.Error("C12 fails on a class 2 band: class 2 bands do not gate")
	}
}
