package targets

import (
	"math"
	"strings"
	"testing"
)

// never is a step that never came.
var never = math.Inf(1)

// TestBookHoldsItsRules feeds each rule the book's own printed values, which satisfy it, then breaks one part at a
// time; ties at a threshold hold, as a value printed at the threshold must.
func TestBookHoldsItsRules(t *testing.T) {
	// The book's rows (reproduction-targets.md): §12.2's credit arms, §12.3's arms, §12.4's context grid.
	outcome := Row{Pass: 0.656, Reads: 1.01, Tests: 0.01, Edits: 0.78, Turns: 2.81}
	token := Row{Pass: 0.787, Reads: 1.03, Tests: 0.97, Edits: 0.98, Turns: 4.01}
	turn := Row{Pass: 0.769, Reads: 1.02, Tests: 0.29, Edits: 0.89, Turns: 3.83}
	dear := Row{Pass: 0.000, Turns: 1.00}
	full := Row{Pass: 0.731, Reads: 1.01, Tests: 0.82, Turns: 3.87}
	fullMasked := Row{Pass: 0.725, Reads: 1.27, Tests: 0.05, Turns: 3.39}
	maskedFull := Row{Pass: 0.500, Reads: 1.04, Tests: 0.07, Turns: 5.29}
	maskedOwn := Row{Pass: 0.794, Reads: 1.04, Tests: 0.02, Turns: 3.38}
	cheap := Cheap{ReadsUp: 25, TestsStart: 0.30, TestsPeak: 0.75, DefaultStart: 0.30, DefaultAt: 0.80, TestsDown: 29}

	tests := []struct {
		name    string
		clauses []Clause
		holds   bool
	}{
		{"C8 book", C8(0.01, 0.01), true},
		{"C8 keeps the test in training", C8(0.30, 0.01), false},
		{"C8 keeps it held out", C8(0.01, 0.20), false},
		{"C10 book", C10(outcome, token, turn), true},
		{"C10 an arm that does not read", C10(outcome, token, Row{Pass: 0.5, Reads: 0.5, Tests: 0.29, Turns: 3.83}), false},
		{"C10 the outcome arm tests more", C10(Row{Pass: 0.656, Reads: 1.01, Tests: 0.40, Turns: 2.81}, token, turn), false},
		{"C10 the outcome arm lasts longer", C10(Row{Pass: 0.656, Reads: 1.01, Tests: 0.01, Turns: 3.90}, token, turn), false},
		{"C10 longer by exactly 0.05 (a tie)", C10(Row{Pass: 0.656, Reads: 1.01, Tests: 0.01, Turns: 3.10625}, token,
			Row{Pass: 0.769, Reads: 1.02, Tests: 0.29, Turns: 3.05625}), true},
		{"C10 critic arms passing less is soft", C10(Row{Pass: 0.9, Reads: 1.01, Tests: 0.01, Turns: 2.81}, token, turn), true},
		{"C12 book", C12(0.80), true},
		{"C12 at its threshold", C12(0.40), true},
		{"C12 drops the test", C12(0.39), false},
		{"C14 book", C14(dear, -0.302), true},
		{"C14 still edits", C14(Row{Edits: 0.10, Turns: 1.02}, -0.302), false},
		{"C14 reward off", C14(dear, -0.25), false},
		{"C23 book", C23(0.006), true},
		{"C23 passes without observations", C23(0.10), false},
		{"C19 book", C19(full, fullMasked), true},
		{"C19 keeps its tests", C19(full, Row{Pass: 0.725, Reads: 1.27, Tests: 0.50, Turns: 3.39}), false},
		{"C19 reading less is soft", C19(full, Row{Pass: 0.725, Reads: 0.9, Tests: 0.05, Turns: 3.39}), true},
		{"C21 book", C21(maskedFull, maskedOwn, full, fullMasked), true},
		{"C21 no asymmetry", C21(maskedFull, maskedOwn, full, Row{Pass: 0.45, Tests: 0.05, Turns: 3.39}), false},
		{"C27 book", C27(0.0189, 0.0138), true},
		{"C27 errors triple", C27(0.0189, 0.0570), false},
		{"C27 errors vanish", C27(0.0189, 0.0010), false},
		{"C28 book", C28(Row{}), true},
		{"C28 passes single-turn tasks", C28(Row{Pass: 0.1}), false},
		{"C32 book", C32([4]float64{1.82, 1.02, 1.01, 1.01}, 1.00), true},
		{"C32 an extra call in window 3", C32([4]float64{1.73, 1.02, 1.16, 1.02}, 1.00), false},
		{"C32 last window away from C14", C32([4]float64{1.82, 1.02, 1.01, 1.01}, 1.07), false},
		{"C34 book", C34(0.12, 0.72), true},
		{"C34 stalls too little", C34(0.3125, 0.72), false},
		{"C34 starts low", C34(0.25, 0.50), false},
		{"F2a book", F2a(9, never), true},
		{"F2a too late", F2a(16, never), false},
		{"F2a after the pass rate rose", F2a(12, 10), false},
		{"F2b book", F2b(8, 0.16, 0.24), true},
		{"F2b never stops reading", F2b(never, 0.16, 0.24), false},
		{"F2b passes too much", F2b(8, 0.16, 0.33), false},
		{"F2c book", F2c(1.40, 12, 1.02), true},
		{"F2c no overshoot", F2c(1.03, 38, 1.01), false},
		{"F2c never settles", F2c(1.62, 18, 1.60), false},
		{"F2d book", F2d(cheap), true},
		{"F2d reads too soon", F2d(Cheap{ReadsUp: 13, TestsStart: 0.38, TestsPeak: 0.71, DefaultStart: 0.38, DefaultAt: 1.07, TestsDown: 24}), false},
		{"F2d never reads", F2d(Cheap{ReadsUp: never, TestsStart: 0.30, TestsPeak: 0.75, DefaultStart: 0.30, DefaultAt: 0.80, TestsDown: 29}), false},
	}
	for _, tc := range tests {
		if got := Holds(tc.clauses); got != tc.holds {
			t.Errorf("%s: holds = %v, want %v (%+v)", tc.name, got, tc.holds, tc.clauses)
		}
	}
}

// TestThreeTurnRegime checks C15's two regimes and that its clause names the one that occurred.
func TestThreeTurnRegime(t *testing.T) {
	book := Row{Pass: 0.200, Edits: 0.99, Turns: 2.03}
	tests := []struct {
		name                       string
		row                        Row
		reward, trainPeak, ceiling float64
		regime                     string
	}{
		{"book", book, 0.181, 0.20, 0.200, "regime (a) blind guesser"},
		{"malformed first calls", Row{Pass: 0.206, Edits: 0.99, Turns: 2.59}, 0.239, 0.26, 0.200, "neither regime"},
		{"remembers the training tasks", book, 0.181, 0.26, 0.200, "neither regime"},
		{"the exploratory reader", Row{Pass: 0.41, Reads: 0.95, Edits: 0.95, Turns: 2.90}, 0.40, 0.45, 0.200, "regime (b) reader"},
		{"a reader passing more than 0.50", Row{Pass: 0.688, Reads: 0.92, Edits: 0.90, Turns: 2.95}, 0.656, 0.70, 0.200, "neither regime"},
	}
	for _, tc := range tests {
		c := C15(tc.row, tc.reward, tc.trainPeak, tc.ceiling)
		if !strings.HasSuffix(c.Desc, ": "+tc.regime) || c.OK != (tc.regime != "neither regime") {
			t.Errorf("%s: %q, OK %v; want regime %q", tc.name, c.Desc, c.OK, tc.regime)
		}
	}
	if !IsReader(Row{Reads: 0.5}) || IsReader(book) {
		t.Error("IsReader: want reads ≥ 0.5")
	}
}

// TestDescriptions pins the wording the report's known deviations are keyed by (notebooks/harness/bookreport/deviations.md).
func TestDescriptions(t *testing.T) {
	tests := []struct {
		clause Clause
		want   string
	}{
		{C32([4]float64{}, 0)[1], "windows 2–4 ≤ 1.1"},
		{C34(0, 0)[0], "stall: min submit over steps 5–15 ≤ 0.30 and ≤ step-0 submit − 0.30"},
		{F2c(0, 0, 0)[0], "overshoot: reads (5-step average) peak at step 12 ± 5, at least 0.10 above steps 30–39"},
		{F2c(0, 0, 0)[1], "settle: reads over steps 30–39 in [0.85, 1.2]"},
		{F2d(Cheap{})[0], "reads (5-step average) up to 0.85 at step 25 ± 5"},
		{C12(0)[0], "tests (the free test habit survives) ≥ 0.4"},
		{Near("pass", 0, 0.762, 0.10), "pass 0.762 ± 0.1"},
	}
	for _, tc := range tests {
		if tc.clause.Desc != tc.want {
			t.Errorf("description %q, want %q", tc.clause.Desc, tc.want)
		}
	}
}
