package bookreport

import (
	"slices"
	"strings"
	"testing"
)

// bookSections returns the book's own printed lines, grouped by section, as if our notebooks printed them, with
// the auxiliary lines' examples (consistent with the book's values). replace and drop take IDs of either.
func bookSections(replace map[string]string, drop ...string) map[string]SectionOutput {
	out := map[string]SectionOutput{}
	for _, bl := range BookLines() {
		so := out[bl.Section]
		so.Exists = true
		line, ok := replace[bl.ID]
		if !ok {
			line = bl.Book
		}
		skip := false
		for _, d := range drop {
			skip = skip || d == bl.ID
		}
		if !skip {
			so.Lines = append(so.Lines, "some other line", line)
		}
		out[bl.Section] = so
	}
	for _, al := range AuxLines() {
		if slices.Contains(drop, al.ID) {
			continue
		}
		line, ok := replace[al.ID]
		if !ok {
			line = al.Example
		}
		so := out[al.Section]
		so.Lines = append(so.Lines, strings.Split(line, "\n")...) // a Multi line's example holds several
		out[al.Section] = so
	}
	return out
}

func TestBookLinesPassTheirOwnRules(t *testing.T) {
	lines := BookLines()
	if len(lines) != 44 {
		t.Fatalf("%d book lines, want 44", len(lines))
	}
	rep := Evaluate(bookSections(nil))
	for _, r := range rep.Lines {
		if !r.Found {
			t.Errorf("%s: the book's own line %q does not parse", r.ID, r.Book)
			continue
		}
		if s := r.Status(); s != "pass" && s != "report" {
			t.Errorf("%s: status %q for the book's own line", r.ID, s)
		}
		for _, c := range r.Checks {
			if !c.OK || c.NA {
				t.Errorf("%s: the book's value fails its own check [%s] %s (NA %v)", r.ID, c.Class, c.Desc, c.NA)
			}
		}
	}
	if f := rep.Failures(); len(f) != 0 {
		t.Errorf("Failures on the book's lines: %v", f)
	}
	md := rep.Markdown(nil)
	for _, want := range []string{"**44 of 44 book lines inside their rules**", "| C17 | 12.4 |", "inside"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestGoFormattedLinesParse(t *testing.T) {
	// Go prints booleans in lower case and slices with spaces; both are accepted.
	rep := Evaluate(bookSections(map[string]string{
		"C16": "identical episodes: true | calls: 61",
		"C32": "penalty 0.3 run, turns per episode by 10-step window: [1.82 1.02 1.01 1.01]",
		"C14": "penalty 0.3   |         0.000   0.00   0.00   0.00   1.00 | −0.302",
	}))
	if f := rep.Failures(); len(f) != 0 {
		t.Errorf("Failures: %v", f)
	}
	if v := rep.byID["C32"].Values; len(v) != 4 || v[0] != 1.82 {
		t.Errorf("C32 values %v", v)
	}
}

func TestPerturbedLinesFail(t *testing.T) {
	withoutKnownDeviations(t)
	for id, line := range map[string]string{
		"C1":  "template  predicted positions   82 | with gradient    3",
		"C3":  "policy    predicted positions  201 | with gradient  200",
		"C5":  "max_turns  6 | tokens per episode  38.0 (max 300) | policy share 0.30 | context overflow 0.00",
		"C13": "penalty 0.05  |         0.657   1.01   0.01   0.78   2.81 | +0.529",
		"C14": "penalty 0.3   |         0.300   0.00   0.00   0.00   1.00 | -0.302",
		"C16": "identical episodes: False | calls: 61",
		"C17": "max |log p(episode) - sum of per-call log p| = 3.0e-03",
		"C21": "trained keep_obs=1 evaluated keep_obs=None | pass 0.780 | reads 1.04 | tests 0.07 | turns 5.29",
		"C25": "early stop         episodes with an error 0.050 | their pass rate 0.010 | overall pass 0.144 | policy tokens per episode 11.6",
		"C28": "multi-turn only  multi-turn pass 0.750 (reads 1.02) | single-turn pass 0.000 (reads 0.00)",
		"C30": "single-turn share of episodes 0.50 | of loss weight: token_mean 0.19, seq_mean 0.45",
		"C31": "starting policy: pass 0.17, turns 3.64 -> attempt worth -0.80; submit at once worth -0.30",
		"C38": "step 25 | submit rate 0.58 | pass 0.56 | reward +0.70 | turns 4.86",
		"C42": "masked truncation, submit rate by 10-step window: [0.37, 0.13, 0.1, 0.45]",
		"C44": "truncation masked  held-out pass 0.500 | turns 5.84",
	} {
		rep := Evaluate(bookSections(map[string]string{id: line}))
		r := rep.byID[id]
		if !r.Found {
			t.Errorf("%s: perturbed line %q does not parse", id, line)
			continue
		}
		if !r.Failed() {
			t.Errorf("%s: perturbed line %q passes (status %q)", id, line, r.Status())
		}
		found := false
		for _, f := range rep.Failures() {
			found = found || strings.HasPrefix(f, id+" ")
		}
		if !found {
			t.Errorf("%s: Failures = %v", id, rep.Failures())
		}
	}
}

func TestCrossLineRuleFailsTheReferringLine(t *testing.T) {
	withoutKnownDeviations(t)
	// Never-submit run without a stall: the stall rules of C34 and C35 fail.
	rep := Evaluate(bookSections(map[string]string{
		"C34": "step  5 | submit rate 0.70 | pass 0.20 | reward -0.30 | turns 3.50",
		"C35": "step 10 | submit rate 0.70 | pass 0.20 | reward -0.30 | turns 3.50",
		"C36": "step 15 | submit rate 0.70 | pass 0.20 | reward -0.30 | turns 3.50",
		"never-submit extremes": "never-submit run: steps 5-15 lowest submit rate 0.700 (step 5), most turns 3.50 (step 5) | " +
			"steps 15-39 largest submit - pass 0.020 (step 25) | steps 30-39 mean submit rate 0.660",
	}))
	for _, id := range []string{"C34", "C35"} {
		if !rep.byID[id].Failed() {
			t.Errorf("%s passes without a stall", id)
		}
	}
}

func TestBandMissIsReportedNotFailed(t *testing.T) {
	rep := Evaluate(bookSections(map[string]string{
		"C12": "default       |         0.500   1.02   0.80   0.96   3.88 | +0.711",
	}))
	r := rep.byID["C12"]
	if r.Status() != "outside band" || r.Failed() {
		t.Errorf("C12 with pass 0.500: status %q failed %v", r.Status(), r.Failed())
	}
	// C28 refers to C12's pass: it is class 1 and must fail.
	if !rep.byID["C28"].Failed() {
		t.Error("C28 must differ from C12 now")
	}
}

func TestMissingLines(t *testing.T) {
	// A written notebook that does not print a line fails; a draft or absent one does not.
	rep := Evaluate(bookSections(nil, "C20"))
	if r := rep.byID["C20"]; r.Status() != "missing" || !r.Failed() {
		t.Errorf("C20 missing from a written notebook: %q", r.Status())
	}
	if r := rep.byID["C21"]; r.Failed() {
		t.Errorf("C21 refers to C22 only and must pass: %q", r.Status())
	}
	secs := bookSections(nil, "C20")
	so := secs["12.4"]
	so.Draft = true
	secs["12.4"] = so
	if r := Evaluate(secs).byID["C20"]; r.Failed() || r.Status() != "missing (not written)" {
		t.Errorf("C20 missing from a draft: %q", r.Status())
	}
	rep = Evaluate(map[string]SectionOutput{})
	if f := rep.Failures(); len(f) != 0 {
		t.Errorf("no notebooks at all: Failures %v", f)
	}
	// C7's cross-line checks are not applicable when C5 is missing.
	rep = Evaluate(bookSections(nil, "C5"))
	na := 0
	for _, c := range rep.byID["C7"].Checks {
		if c.NA {
			na++
		}
	}
	if na == 0 || rep.byID["C7"].Failed() {
		t.Errorf("C7 without C5: %d checks n/a, failed %v", na, rep.byID["C7"].Failed())
	}
}

func TestComplete(t *testing.T) {
	draft := bookSections(nil)
	so := draft["12.4"]
	so.Draft = true
	draft["12.4"] = so
	absent := bookSections(nil)
	delete(absent, "12.7")
	for _, tc := range []struct {
		name     string
		sections map[string]SectionOutput
		want     bool
	}{
		{"every section written", bookSections(nil), true},
		{"a line missing from a written notebook", bookSections(nil, "C20"), true},
		{"a draft", draft, false},
		{"a section without notebook", absent, false},
		{"no notebooks", map[string]SectionOutput{}, false},
	} {
		if got := Evaluate(tc.sections).Complete(); got != tc.want {
			t.Errorf("%s: Complete = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestKnownDeviations checks that a documented deviation masks its own check only, only within its bound, and
// that an entry no failing check uses is reported stale.
func TestKnownDeviations(t *testing.T) {
	const key = "C14: pass ≤ 0.01"
	setDeviations(t, map[string]Deviation{key: {
		Why: "test", Bound: "pass ≤ 0.05", Within: func(c *ruleCtx) bool { return c.v(0) <= 0.05 },
	}})
	tests := []struct {
		name, line    string
		status        string
		beyond, stale bool
	}{
		{"within the bound: masked", "penalty 0.3   |         0.030   0.00   0.00   0.00   1.00 | -0.302", "known deviation", false, false},
		{"beyond the bound: fails", "penalty 0.3   |         0.100   0.00   0.00   0.00   1.00 | -0.302", "FAIL", true, true},
		{"another check of the line fails", "penalty 0.3   |         0.030   0.00   0.00   0.00   1.50 | -0.302", "FAIL", false, false},
	}
	for _, tc := range tests {
		rep := Evaluate(bookSections(map[string]string{"C14": tc.line}))
		r := rep.byID["C14"]
		if got := r.Status(); got != tc.status {
			t.Errorf("%s: status %q, want %q", tc.name, got, tc.status)
		}
		failures := strings.Join(rep.Failures(), "\n")
		if got := strings.Contains(failures, "beyond its documented deviation"); got != tc.beyond {
			t.Errorf("%s: failures %q; want beyond-the-bound %v", tc.name, failures, tc.beyond)
		}
		if stale := rep.StaleDeviations(); (len(stale) > 0) != tc.stale {
			t.Errorf("%s: stale deviations %v, want stale %v", tc.name, stale, tc.stale)
		}
	}
	if stale := Evaluate(bookSections(nil)).StaleDeviations(); len(stale) != 1 || stale[0] != key {
		t.Errorf("the book's own lines: stale %v, want [%s]", stale, key)
	}
}

// TestCalibration checks the gate on the step-0 batch's exact counts: the book's batch is inside; one passing
// episode of 64 more than 0.23 allows is outside although C31 prints it as 0.23.
func TestCalibration(t *testing.T) {
	tests := []struct {
		name, line string
		want       bool
	}{
		{"the book's", "", true},
		{"15 of 64 pass", "step-0 batch: 15 of 64 episodes pass, 46 submit, 4 make a malformed call | turns 3.516, reads 0.094 per episode", false},
		{"14 of 64 pass", "step-0 batch: 14 of 64 episodes pass, 46 submit, 4 make a malformed call | turns 3.516, reads 0.094 per episode", true},
		{"reads not rare", "step-0 batch: 11 of 64 episodes pass, 46 submit, 3 make a malformed call | turns 3.641, reads 0.400 per episode", false},
		{"no malformed calls", "step-0 batch: 11 of 64 episodes pass, 46 submit, 0 make a malformed call | turns 3.641, reads 0.047 per episode", false},
	}
	for _, tc := range tests {
		replace := map[string]string{}
		if tc.line != "" {
			replace["step-0 batch"] = tc.line
		}
		rep := Evaluate(bookSections(replace))
		if got := rep.Calibrated(); got != tc.want {
			cal, _ := rep.calibration()
			t.Errorf("%s: Calibrated = %v, want %v (%s)", tc.name, got, tc.want, cal)
		}
	}
	if Evaluate(bookSections(nil, "step-0 batch")).Calibrated() {
		t.Error("calibrated without the step-0 batch's line")
	}
}

// TestAuxiliaryLines checks the rules that read auxiliary lines, and that a written notebook must print them.
func TestAuxiliaryLines(t *testing.T) {
	withoutKnownDeviations(t)
	rep := Evaluate(bookSections(nil, "never-submit extremes"))
	if f := strings.Join(rep.Failures(), "\n"); !strings.Contains(f, `auxiliary line "never-submit extremes" (§12.7) not printed`) {
		t.Errorf("a written 12.7 without its auxiliary line: failures %q", f)
	}
	secs := bookSections(nil, "never-submit extremes")
	so := secs["12.7"]
	so.Draft = true
	secs["12.7"] = so
	for _, f := range Evaluate(secs).Failures() {
		if strings.Contains(f, "auxiliary") {
			t.Errorf("a draft 12.7: %s", f)
		}
	}
	tests := []struct {
		name    string
		replace map[string]string
		id      string // the line that must fail
	}{
		{"C13's mean reward off the identity", map[string]string{
			"penalty 0.05 windows": "penalty 0.05  turns by 10-step window: 3.52 3.30 2.95 2.50"}, "C13"},
		{"C32's windows differ from 12.3's", map[string]string{
			"penalty 0.3 windows": "penalty 0.3   turns by 10-step window: 1.90 1.02 1.01 1.01"}, "C32"},
		{"C31's pass differs from the default run's step 0", map[string]string{
			"default step 0": "default       trained: step 0 pass 0.20 -> step 39 pass 0.75"}, "C31"},
		{"C31's pass is not the step-0 batch's", map[string]string{
			"step-0 batch": "step-0 batch: 13 of 64 episodes pass, 46 submit, 3 make a malformed call | turns 3.641, reads 0.047 per episode"}, "C31"},
		{"C33's submit rate is not the step-0 batch's", map[string]string{
			"step-0 batch": "step-0 batch: 11 of 64 episodes pass, 40 submit, 3 make a malformed call | turns 3.641, reads 0.047 per episode"}, "C33"},
		{"a lowest submit rate above the printed ones", map[string]string{
			"never-submit extremes": "never-submit run: steps 5-15 lowest submit rate 0.200 (step 10), most turns 5.78 (step 10) | steps 15-39 largest submit - pass 0.020 (step 25) | steps 30-39 mean submit rate 0.660"}, "C34"},
		{"C42 within 0.30 of the never-submit run's late submit rate", map[string]string{
			"never-submit extremes": "never-submit run: steps 5-15 lowest submit rate 0.120 (step 10), most turns 5.78 (step 10) | steps 15-39 largest submit - pass 0.020 (step 25) | steps 30-39 mean submit rate 0.350"}, "C42"},
	}
	for _, tc := range tests {
		rep := Evaluate(bookSections(tc.replace))
		for _, r := range rep.Lines {
			if got := r.Failed(); got != (r.ID == tc.id) {
				t.Errorf("%s: %s failed = %v (status %q)", tc.name, r.ID, got, r.Status())
			}
		}
	}
	// C36's soft check reads the largest gap over every step from 15 on: it is reported, never gating.
	rep = Evaluate(bookSections(map[string]string{
		"never-submit extremes": "never-submit run: steps 5-15 lowest submit rate 0.120 (step 10), most turns 5.78 (step 10) | steps 15-39 largest submit - pass 0.060 (step 16) | steps 30-39 mean submit rate 0.660"}))
	r := rep.byID["C36"]
	soft := false
	for _, c := range r.Checks {
		soft = soft || (c.Soft && !c.OK && strings.Contains(c.Desc, "submit − pass"))
	}
	if !soft || r.Failed() {
		t.Errorf("C36 with a gap of 0.06 at step 16: soft check failed %v, line failed %v", soft, r.Failed())
	}
}

// TestDuplicateLines checks that a book line printed twice in its section is a failure: the report would read
// the first and silently ignore the other.
func TestDuplicateLines(t *testing.T) {
	secs := bookSections(nil)
	so := secs["12.3"]
	so.Lines = append(so.Lines, "penalty 0.3   |         0.500   0.00   0.00   0.00   1.00 | -0.302")
	secs["12.3"] = so
	f := strings.Join(Evaluate(secs).Failures(), "\n")
	if !strings.Contains(f, "C14 (§12.3): printed 2 times") {
		t.Errorf("C14 printed twice: failures %q", f)
	}
	if f := Evaluate(bookSections(nil)).Failures(); len(f) != 0 {
		t.Errorf("the book's lines: %v", f)
	}
}

// TestReportNamesNumerics: the report says what computed each section's outputs, grouping sections by it.
func TestReportNamesNumerics(t *testing.T) {
	secs := bookSections(nil)
	for sec, so := range secs {
		so.Numerics = "xla/cpu=A"
		if sec == "12.3" || sec == "12.10" {
			so.Numerics = "SimpleGo (go)/arch=amd64"
		}
		if sec == "12.5" {
			so.Numerics = ""
		}
		secs[sec] = so
	}
	secs["12.10"] = SectionOutput{Exists: true, Numerics: "SimpleGo (go)/arch=amd64"}
	secs["12.9"] = SectionOutput{Numerics: "ignored: no notebook"}
	rep := Evaluate(secs)
	want := map[string][]string{
		"xla/cpu=A":                {"12.1", "12.2", "12.4", "12.6", "12.7"},
		"SimpleGo (go)/arch=amd64": {"12.3", "12.10"},
		"unrecorded":               {"12.5"},
	}
	if len(rep.Numerics) != len(want) {
		t.Errorf("Numerics = %v, want %v", rep.Numerics, want)
	}
	for n, w := range want {
		if got := rep.Numerics[n]; !slices.Equal(got, w) {
			t.Errorf("Numerics[%q] = %v, want %v", n, got, w)
		}
	}
	md := rep.Markdown(nil)
	for _, w := range []string{"Computed under `xla/cpu=A` (§12.1, §12.2, §12.4, §12.6, §12.7)",
		"Computed under `SimpleGo (go)/arch=amd64` (§12.3, §12.10)", "Computed under `unrecorded` (§12.5)"} {
		if !strings.Contains(md, w) {
			t.Errorf("the report lacks %q", w)
		}
	}
}

// TestMarkResampled: on another realization a class 3 failure is reported, not gating; a class 1 failure and a
// missing line still gate.
func TestMarkResampled(t *testing.T) {
	// C14 (class 3: pass ≤ 0.01) fails; C16's "identical episodes" (class 1) fails; C20 is missing.
	secs := bookSections(map[string]string{
		"C14": "penalty 0.3   |         0.300   0.00   0.00   0.00   1.00 | -0.302",
		"C16": "identical episodes: false | calls: 61",
	}, "C20")
	rep := Evaluate(secs)
	for _, id := range []string{"C14", "C16", "C20"} {
		if !rep.byID[id].Failed() {
			t.Fatalf("%s does not fail before MarkResampled (status %q)", id, rep.byID[id].Status())
		}
	}
	rep.MarkResampled()
	for _, tc := range []struct {
		id, status string
		failed     bool
	}{
		{"C14", Resampled, false},
		{"C16", "FAIL", true},
		{"C20", "missing", true},
	} {
		r := rep.byID[tc.id]
		if r.Status() != tc.status || r.Failed() != tc.failed {
			t.Errorf("%s resampled: status %q, failed %v; want %q, %v", tc.id, r.Status(), r.Failed(), tc.status, tc.failed)
		}
	}
	if f := rep.ResampledFailures(); len(f) != 1 || !strings.HasPrefix(f[0], "C14 (§12.3)") || !strings.Contains(f[0], "class 3: pass ≤ 0.01") {
		t.Errorf("ResampledFailures = %q, want C14's pass check only", f)
	}
	for _, f := range rep.Failures() {
		if strings.HasPrefix(f, "C14") {
			t.Errorf("Failures lists the resampled C14: %q", f)
		}
	}
	if md := rep.Markdown(nil); !strings.Contains(md, "**Another realization:**") || !strings.Contains(md, "1 lines "+Resampled) ||
		!strings.Contains(md, "✗ (at this seed: judged by seeds) [3] pass ≤ 0.01") {
		t.Errorf("the report does not say C14 fails on another realization")
	}
}

// TestRealizations: a check that reads a line of another section compares lines of one realization only. When
// the sections it reads were computed under other numerics than its own (some notebooks executed here, some
// committed from another processor), it is reported as not comparable, never as a failure; when all come from one
// realization, whichever, it is evaluated as usual. Checks that read only their own section are unaffected.
func TestRealizations(t *testing.T) {
	// C28's multi-turn pass must equal C12's (class 1, §12.6 reads §12.3); 0.700 breaks it.
	broken := map[string]string{"C28": "multi-turn only  multi-turn pass 0.700 (reads 1.02) | single-turn pass 0.000 (reads 0.00)"}
	const sameAsC12 = "multi-turn pass and reads identical to C12"
	for _, tc := range []struct {
		name         string
		numerics     map[string]string // section → numerics; unlisted sections: "xla/cpu=A"
		replace      map[string]string
		status       string // C28's
		incomparable bool   // C28's cross-section check
	}{
		{"one realization, holds", nil, nil, "pass", false},
		{"one realization, fails", nil, broken, "FAIL", false},
		{"another single realization, fails", map[string]string{"12.1": "x", "12.2": "x", "12.3": "x", "12.4": "x",
			"12.5": "x", "12.6": "x", "12.7": "x"}, broken, "FAIL", false},
		{"12.6 here, 12.3 committed elsewhere", map[string]string{"12.6": "xla/cpu=B"}, broken, "pass", true},
		{"12.3 here, 12.6 committed elsewhere", map[string]string{"12.3": "xla/cpu=B"}, broken, "pass", true},
		{"12.6 unrecorded", map[string]string{"12.6": ""}, broken, "pass", true},
		{"other sections differ", map[string]string{"12.1": "xla/cpu=B", "12.7": "go/arch=arm64"}, broken, "FAIL", false},
	} {
		sections := bookSections(tc.replace)
		for sec, so := range sections {
			so.Numerics = "xla/cpu=A"
			if n, ok := tc.numerics[sec]; ok {
				so.Numerics = n
			}
			sections[sec] = so
		}
		rep := Evaluate(sections)
		r := rep.byID["C28"]
		if got := r.Status(); got != tc.status {
			t.Errorf("%s: C28 status %q, want %q (%+v)", tc.name, got, tc.status, r.Checks)
		}
		for _, c := range r.Checks {
			if c.Desc == sameAsC12 && (c.Incomparable != "") != tc.incomparable {
				t.Errorf("%s: %q incomparable %q, want %v", tc.name, c.Desc, c.Incomparable, tc.incomparable)
			}
			if c.Desc != sameAsC12 && c.Incomparable != "" {
				t.Errorf("%s: C28's own check %q marked incomparable: %s", tc.name, c.Desc, c.Incomparable)
			}
		}
		if tc.incomparable {
			if f := rep.Failures(); len(f) > 0 {
				t.Errorf("%s: failures %q", tc.name, f)
			}
			if md := rep.Markdown(nil); !strings.Contains(md, "not comparable (reads C12 of §12.3") {
				t.Errorf("%s: the report does not say C28's check is not comparable", tc.name)
			}
		}
	}

	// Every check that reads another section is marked when that section alone has other numerics, and none that
	// reads only its own; with one numerics everywhere nothing is marked.
	for _, sec := range []string{"12.1", "12.2", "12.3", "12.4", "12.5", "12.6", "12.7"} {
		sections := bookSections(nil)
		for s, so := range sections {
			so.Numerics = "A"
			if s == sec {
				so.Numerics = "B"
			}
			sections[s] = so
		}
		for _, r := range Evaluate(sections).Lines {
			for _, c := range r.Checks {
				if c.Incomparable != "" && r.Section != sec && !strings.Contains(c.Incomparable, "§"+sec+",") {
					t.Errorf("§%s differs: %s %q marked for %s", sec, r.ID, c.Desc, c.Incomparable)
				}
			}
		}
	}
	for _, r := range Evaluate(bookSections(nil)).Lines {
		for _, c := range r.Checks {
			if c.Incomparable != "" {
				t.Errorf("one realization: %s %q marked %s", r.ID, c.Desc, c.Incomparable)
			}
		}
	}
}
