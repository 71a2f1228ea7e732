package bookreport

import (
	"strings"
	"testing"
)

func TestReadTSV(t *testing.T) {
	rows := readTSV("t.tsv", "# a comment\nA\tB\n\n# another\nx\ty\\nz\n", "A", "B")
	if len(rows) != 1 || rows[0][0] != "x" || rows[0][1] != "y\nz" {
		t.Errorf("rows %q", rows)
	}
	for _, tc := range []struct{ name, data string }{
		{"wrong header", "A\tC\nx\ty\n"},
		{"too few fields", "A\tB\nx\n"},
		{"too many fields", "A\tB\nx\ty\tz\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("readTSV(%q) did not panic", tc.data)
				}
			}()
			readTSV("t.tsv", tc.data, "A", "B")
		})
	}
}

func TestReadDeviations(t *testing.T) {
	within := func(*ruleCtx) bool { return true }
	md := "# Title\n\nPreamble,\nover two lines.\n\n## C1: a check\n\nWhy: one\ntwo\n\nBound: three\n"
	devs := readDeviations(md, map[string]func(*ruleCtx) bool{"C1: a check": within})
	if d := devs["C1: a check"]; len(devs) != 1 || d.Why != "one two" || d.Bound != "three" || d.Within == nil {
		t.Errorf("deviations %+v", devs)
	}
	for _, tc := range []struct{ name, md string }{
		{"no function", "## C2: other\n\nWhy: a\n\nBound: b\n"},
		{"no Bound", "## C1: a check\n\nWhy: a\n"},
		{"a stray paragraph", "## C1: a check\n\nWhy: a\n\nBound: b\n\nmore\n"},
		{"an entry twice", "## C1: a check\n\nWhy: a\n\nBound: b\n\n## C1: a check\n\nWhy: a\n\nBound: b\n"},
		{"a function without an entry", "# Title\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("readDeviations(%q) did not panic", tc.md)
				}
			}()
			readDeviations(tc.md, map[string]func(*ruleCtx) bool{"C1: a check": within})
		})
	}
}

// TestKnownDeviationsData checks that every known deviation names a line or claim of the report, and that its
// prose reads back as one line of text (the report prints it in a table cell).
func TestKnownDeviationsData(t *testing.T) {
	ids := map[string]bool{}
	for _, bl := range append(BookLines(), Claims()...) {
		ids[bl.ID] = true
	}
	devs := KnownDeviations()
	if len(devs) == 0 {
		t.Fatal("no known deviations read")
	}
	for key, d := range devs {
		id, _, _ := strings.Cut(key, ": ")
		if !ids[id] {
			t.Errorf("%q: no line or claim %s", key, id)
		}
		for _, s := range []string{d.Why, d.Bound} {
			if strings.Contains(s, "\n") || strings.Contains(s, "  ") || strings.TrimSpace(s) != s {
				t.Errorf("%q: text %q is not one line of single-spaced words", key, s)
			}
		}
	}
}

// TestSixSeeds checks that every six-seed count names a line or claim of the report.
func TestSixSeeds(t *testing.T) {
	ids := map[string]bool{}
	for _, l := range append(BookLines(), Claims()...) {
		ids[l.ID] = true
	}
	counts := SixSeeds()
	if len(counts) < 10 {
		t.Fatalf("%d six-seed counts", len(counts))
	}
	for _, c := range counts {
		if !ids[c.ID] {
			t.Errorf("sixseeds.tsv: %s is no line or claim of the report", c.ID)
		}
	}
}
