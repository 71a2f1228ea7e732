package harness

import (
	"regexp"
	"strings"
	"testing"
)

// proseNumber is a decimal number in prose, with what precedes it: not a section number ("12.5's", "§12.5"), nor
// part of a word or a version. A number after "= " is the prose's own arithmetic on numbers it quotes.
var proseNumber = regexp.MustCompile(`(^|= |[^\w.§=])(\d+\.\d+)(?:$|[^\w.%'’])`)

// otherSource marks a sentence or a parenthesis whose numbers come from elsewhere than the notebook's outputs: the
// book, other seeds or processors, FINDINGS.md, the reproduction targets' rules, or another section.
var otherSource = regexp.MustCompile(`(?i)\bbook|seeds?\b|\bxeon\b|findings|\brule\b|\bgate\b|targets|section \d|§`)

// TestProseQuotesOutputs checks the notebooks' own account of their run against their outputs, so that the two
// cannot drift: every number that a paragraph marked "In our run" states must be printed by the notebook, except in
// a sentence or a parenthesis that names another source (the book, other seeds, FINDINGS.md, a rule, another
// section), whose numbers are not this run's, and a number the prose computes ("15/64 = 0.234").
func TestProseQuotesOutputs(t *testing.T) {
	paths, err := Chapter("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, p := range paths {
		nb, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		var printed strings.Builder
		for _, c := range nb.CodeCells() {
			for _, o := range c.Outputs {
				printed.WriteString(string(o.Text))
				printed.WriteString("\n")
			}
		}
		out := printed.String()
		for _, c := range nb.Cells {
			if c.Type != "markdown" {
				continue
			}
			for _, para := range strings.Split(string(c.Source), "\n\n") {
				if !strings.Contains(para, "In our run") {
					continue
				}
				for _, n := range ownNumbers(para) {
					checked++
					if !strings.Contains(out, n) {
						t.Errorf("%s: the prose says %s in our run, which its outputs do not print: %q", Section(p), n,
							excerpt(para, n))
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d numbers checked: the test reads too little", checked)
	}
	t.Logf("%d numbers of the prose's own run found in the outputs", checked)
}

// ownNumbers returns the numbers of para that state this run's results: those outside a parenthesis or sentence
// naming another source (otherSource).
func ownNumbers(para string) []string {
	flat := dropAsides(strings.Join(strings.Fields(para), " "))
	var out []string
	for _, sentence := range regexp.MustCompile(`[.;:!?](?:\s|$)`).Split(flat, -1) {
		if otherSource.MatchString(sentence) {
			continue
		}
		for _, m := range proseNumber.FindAllStringSubmatch(sentence, -1) {
			if m[1] != "= " {
				out = append(out, m[2])
			}
		}
	}
	return out
}

// dropAsides removes from s each parenthesis, outermost first and nested ones with it, that names another source
// (otherSource).
func dropAsides(s string) string {
	var b strings.Builder
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			if depth == 0 {
				b.WriteString(s[start:i])
				start = i
			}
			depth++
		case ')':
			if depth == 0 {
				continue
			}
			if depth--; depth == 0 {
				if aside := s[start : i+1]; otherSource.MatchString(aside) {
					b.WriteString("()")
				} else {
					b.WriteString(aside)
				}
				start = i + 1
			}
		}
	}
	b.WriteString(s[start:])
	return b.String()
}

// excerpt is the part of para around the first n.
func excerpt(para, n string) string {
	flat := strings.Join(strings.Fields(para), " ")
	i := strings.Index(flat, n)
	if i < 0 {
		return ""
	}
	return flat[max(0, i-60):min(len(flat), i+len(n)+20)]
}

// TestOwnNumbers checks which numbers of a paragraph the prose test holds to the outputs.
func TestOwnNumbers(t *testing.T) {
	for _, tc := range []struct{ para, want string }{
		{"**In our run** the default passes 0.812 held out (book 0.762).", "0.812"},
		{"It reads 0.97 times; the book's arm reads 1.02. Under RL seeds 0–5 it passes 0.79–0.88.", "0.97"},
		{"The batch has 15 passing episodes of 64, 15/64 = 0.234, in 3.52 calls.", "3.52"},
		{"See 12.5's section and §12.3 (an aside with 0.11, FINDINGS.md (nested 0.2)); it ends at 1.01.", "1.01"},
	} {
		if got := strings.Join(ownNumbers(tc.para), " "); got != tc.want {
			t.Errorf("ownNumbers(%q) = %q, want %q", tc.para, got, tc.want)
		}
	}
}
