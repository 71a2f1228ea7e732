package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// silentFailure matches what a Go failure leaves in a stream: GoNB reports a panic, os.Exit(N), a crash of the
// runtime, a program killed by a signal, or a failing shell line (`!cmd`) only as stderr text, and the cell still
// counts as executed. GoNB ends such a stream with the program's error and a newline ("exit status 3",
// "signal: killed"), which may follow the program's own last stderr text on the same line.
var silentFailure = regexp.MustCompile(`(?m)^(panic: |fatal error: )|(exit status \d+|signal: [a-z][a-z0-9 ()]*)$`)

// Failures lists a notebook's error outputs (compile errors, kernel errors) and silent Go failures.
func Failures(nb *Notebook) []string {
	var out []string
	for i, c := range nb.CodeCells() {
		streams := map[string]string{} // a stream arrives in pieces ("panic: ", "boom", "\n" …): join them
		for _, o := range c.Outputs {
			switch o.Type {
			case "error":
				out = append(out, fmt.Sprintf("%s: error output: %s: %s", cellName(i, c), o.EName,
					firstLines(o.EValue, 8)))
			case "stream":
				streams[o.Name] += string(o.Text)
			}
		}
		for _, name := range []string{"stdout", "stderr"} {
			if loc := silentFailure.FindStringIndex(streams[name]); loc != nil {
				out = append(out, fmt.Sprintf("%s: Go failure on %s: %s", cellName(i, c), name,
					firstLines(streams[name][loc[0]:], 8)))
			}
		}
	}
	return out
}

// cellName names code cell i (0-based) for messages: "cell 3 [first line of source]".
func cellName(i int, c Cell) string {
	first := ""
	for _, l := range strings.Split(string(c.Source), "\n") {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	if r := []rune(first); len(r) > 50 {
		first = string(r[:50]) + "…"
	}
	return fmt.Sprintf("code cell %d [%s]", i+1, first)
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… (%d more lines)", len(lines)-n))
	}
	return strings.Join(lines, "\n    ")
}

// Sanitizer rewrites output text before comparison so that what legitimately varies between runs does not count.
// The rules, in order, for each line:
//
//  1. A carriage return keeps only what follows the last one (a terminal would overwrite the rest).
//  2. ANSI color codes are removed.
//  3. Lines starting with "progress:" (long-run progress) or "cache:" (result-cache notices: "loaded" on a warm
//     cache, "computed … in 3m2s" on a cold one) are dropped.
//  4. Paths: the repository root becomes <repo>, the result cache ($AGENTRL_CACHE or the user cache dir) <cache>,
//     anything under the temporary directory <tmp>, the home directory ~.
//     GoNB's per-kernel names (gonb_1a2b3c4d) become gonb_<id>.
//  5. Durations in Go or common notation (850ms, 12.3s, 1m2.5s, 2h0m0s) become <duration>, and the number after
//     "elapsed", "remaining", "took" or "wall" becomes <duration> too.
//  6. Rates ("12.5 steps/s", "300 tokens/s", "1.2 it/s") become <rate>.
//  7. Trailing blanks and trailing empty lines are removed.
//
// Everything else, every number included, must match exactly.
type Sanitizer struct {
	paths [][2]string // literal path prefix → placeholder, longest first
}

var (
	ansiCode     = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	cellLineTag  = regexp.MustCompile(` ?\[\[ Cell (\[\d+\] )?Line \d+ \]\] ?`) // GoNB marks some stack frames, not always
	dropLine     = regexp.MustCompile(`^\s*(progress|cache):`)
	gonbID       = regexp.MustCompile(`\bgonb_[0-9a-f]{8}\b`)
	tmpPath      = regexp.MustCompile(`(^|[\s"'=(:])/tmp/[^\s"')]*`)
	duration     = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)(\d+(\.\d+)?(ns|µs|us|ms|s|m|h))*\b`)
	afterTimeKey = regexp.MustCompile(`(?i)\b(elapsed|remaining|took|wall|wall time)([:=]?\s*)\d+(\.\d+)?\b`)
	rate         = regexp.MustCompile(`\b\d+(\.\d+)?\s?(it|steps|episodes|tokens|calls|samples)/s\b`)
)

// NewSanitizer returns the sanitizer for a repository rooted at repoRoot.
func NewSanitizer(repoRoot string) *Sanitizer {
	s := &Sanitizer{}
	add := func(p, name string) {
		if p = filepath.Clean(p); p != "." && p != "/" && p != "" {
			s.paths = append(s.paths, [2]string{p, name})
		}
	}
	if repoRoot != "" {
		add(repoRoot, "<repo>")
	}
	if c := os.Getenv("AGENTRL_CACHE"); c != "" {
		add(c, "<cache>")
	}
	if c, err := os.UserCacheDir(); err == nil {
		add(filepath.Join(c, "agentrl"), "<cache>")
	}
	if t := os.TempDir(); t != "/tmp" {
		add(t, "<tmp>")
	}
	if h, err := os.UserHomeDir(); err == nil {
		add(h, "~")
	}
	slices.SortStableFunc(s.paths, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	return s
}

// Text sanitizes a block of output text.
func (s *Sanitizer) Text(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if i := strings.LastIndexByte(line, '\r'); i >= 0 {
			line = line[i+1:]
		}
		line = ansiCode.ReplaceAllString(line, "")
		line = cellLineTag.ReplaceAllString(line, "")
		if dropLine.MatchString(line) {
			continue
		}
		for _, p := range s.paths {
			line = strings.ReplaceAll(line, p[0], p[1])
		}
		line = tmpPath.ReplaceAllString(line, "$1<tmp>")
		line = gonbID.ReplaceAllString(line, "gonb_<id>")
		line = duration.ReplaceAllString(line, "<duration>")
		line = afterTimeKey.ReplaceAllString(line, "$1$2<duration>")
		line = rate.ReplaceAllString(line, "<rate>")
		out = append(out, strings.TrimRight(line, " \t"))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// CellText renders a code cell's outputs as the text that is compared: stdout, then stderr (each the
// concatenation of its streams, since the two may interleave differently from run to run), then each display
// or result in order: text/plain in full, any other kind (image/png, text/html …) by its type only; a status
// display (isStatus) is left out. Error outputs appear by name and value.
func CellText(c Cell, s *Sanitizer) string {
	var stdout, stderr strings.Builder
	var rest []string
	for _, o := range c.Outputs {
		switch o.Type {
		case "stream":
			if o.Name == "stderr" {
				stderr.WriteString(string(o.Text))
			} else {
				stdout.WriteString(string(o.Text))
			}
		case "display_data", "execute_result":
			if isStatus(o, s) {
				continue
			}
			kinds := make([]string, 0, len(o.Data))
			for k := range o.Data {
				kinds = append(kinds, k)
			}
			slices.Sort(kinds)
			for _, k := range kinds {
				if k == "text/plain" {
					var t Text
					if json.Unmarshal(o.Data[k], &t) == nil {
						rest = append(rest, "[display text/plain]\n"+s.Text(string(t)))
					}
				} else {
					rest = append(rest, "[display "+k+"]")
				}
			}
		case "error":
			rest = append(rest, "[error] "+s.Text(o.EName+": "+o.EValue))
		}
	}
	var b []string
	if t := s.Text(stdout.String()); t != "" {
		b = append(b, t)
	}
	if t := s.Text(stderr.String()); t != "" {
		b = append(b, "[stderr]\n"+t)
	}
	b = append(b, rest...)
	return strings.Join(b, "\n")
}

// isStatus reports whether a display is a status block (ch12.Status): text whose every line the sanitizer drops
// (cache: and progress: notices). Whether a cell shows one, and what it says, depends on the state of the result
// store, so it is not compared.
func isStatus(o Output, s *Sanitizer) bool {
	raw, ok := o.Data["text/plain"]
	if !ok {
		return false
	}
	var t Text
	return json.Unmarshal(raw, &t) == nil && strings.TrimSpace(string(t)) != "" && s.Text(string(t)) == ""
}

// Compare returns, for each code cell whose sanitized outputs differ between the committed and the executed
// notebook, a message with a line diff. Cells whose first line carries Marker are skipped.
func Compare(committed, executed *Notebook, s *Sanitizer) []string {
	cc, ec := committed.CodeCells(), executed.CodeCells()
	if len(cc) != len(ec) {
		return []string{fmt.Sprintf("executed notebook has %d code cells, committed %d", len(ec), len(cc))}
	}
	var out []string
	for i := range cc {
		if cc[i].SkipsCompare() {
			continue
		}
		want, got := CellText(cc[i], s), CellText(ec[i], s)
		if want == got {
			continue
		}
		msg := fmt.Sprintf("%s: output differs from the committed one (- committed, + executed):\n%s",
			cellName(i, cc[i]), Diff(want, got, 2, 40))
		if len(cc[i].Outputs) == 0 {
			msg = fmt.Sprintf("%s: no committed output; execute the notebook with `go run ./cmd/execute` "+
				"and commit it", cellName(i, cc[i]))
		}
		out = append(out, msg)
	}
	return out
}

// Diff returns a line diff of a and b: "  " common, "- " only in a, "+ " only in b, with context common lines
// around each change and at most maxLines lines.
func Diff(a, b string, context, maxLines int) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	// Longest common subsequence table.
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte
		line string
	}
	var ops []op
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			ops = append(ops, op{' ', x[i]})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', x[i]})
			i++
		default:
			ops = append(ops, op{'+', y[j]})
			j++
		}
	}
	// Keep changes and `context` common lines around them.
	keep := make([]bool, len(ops))
	for k, o := range ops {
		if o.kind != ' ' {
			for d := max(0, k-context); d <= min(len(ops)-1, k+context); d++ {
				keep[d] = true
			}
		}
	}
	var out []string
	skipped := false
	for k, o := range ops {
		if !keep[k] {
			skipped = true
			continue
		}
		if skipped && len(out) > 0 {
			out = append(out, "  …")
		}
		skipped = false
		out = append(out, string(o.kind)+" "+o.line)
	}
	if len(out) > maxLines {
		out = append(out[:maxLines], fmt.Sprintf("  … (%d more diff lines)", len(out)-maxLines))
	}
	return "    " + strings.Join(out, "\n    ")
}
