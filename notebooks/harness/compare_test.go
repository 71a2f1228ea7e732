package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSanitizer(t *testing.T) {
	t.Setenv("AGENTRL_CACHE", "/data/agentrl-cache")
	s := NewSanitizer("/work/clone")
	for in, want := range map[string]string{
		"took 12.3s": "took <duration>",
		"step 3/40 done in 850ms, total 1m2.5s, eta 2h0m0s":       "step 3/40 done in <duration>, total <duration>, eta <duration>",
		"elapsed 0.123 | remaining: 4":                            "elapsed <duration> | remaining: <duration>",
		"throughput 12.5 steps/s, 300 tokens/s":                   "throughput <rate>, <rate>",
		"progress: train step 3/40 | elapsed 5s":                  "",
		"cache: loaded default-run":                               "",
		"  cache: computed x in 3m2s":                             "",
		"model at /work/clone/agentrl/x.go":                       "model at <repo>/agentrl/x.go",
		"stored in /data/agentrl-cache/runs/a.bin":                "stored in <cache>/runs/a.bin",
		`work dir "/tmp/gonb_1a2b3c4d/main.go"`:                   `work dir "<tmp>"`,
		"package gonb_1a2b3c4d":                                   "package gonb_<id>",
		"50%\r100% done":                                          "100% done",
		"\x1b[7mred\x1b[0m text   ":                               "red text",
		"\t \x1b[7m[[ Cell [1] Line 3 ]]\x1b[0m /tmp/x/main.go:9": "\t<tmp>",
		"\t [[ Cell Line 0 ]] /tmp/x/main.go:86":                  "\t<tmp>",
		// Book lines keep every number.
		"max_turns  6 | tokens per episode  38.0 (max 144) | policy share 0.30 | context overflow 0.00": "max_turns  6 | tokens per episode  38.0 (max 144) | policy share 0.30 | context overflow 0.00",
		"default       |         0.762   1.02   0.80   0.96   3.88 | +0.711":                            "default       |         0.762   1.02   0.80   0.96   3.88 | +0.711",
		"train pass, steps 30-39 0.67 | 16 episodes, 64 episodes per step":                              "train pass, steps 30-39 0.67 | 16 episodes, 64 episodes per step",
	} {
		if got := s.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if got := s.Text("a\n\nb\n\n\n"); got != "a\n\nb" {
		t.Errorf("trailing empty lines: got %q", got)
	}
}

func mustNotebook(t *testing.T, js string) *Notebook {
	t.Helper()
	nb := &Notebook{Path: "x.ipynb"}
	if err := json.Unmarshal([]byte(js), nb); err != nil {
		t.Fatal(err)
	}
	return nb
}

func TestFailures(t *testing.T) {
	stderr := func(parts ...string) []Output {
		var out []Output
		for _, p := range parts {
			out = append(out, Output{Type: "stream", Name: "stderr", Text: Text(p)})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		outputs []Output
		want    string // the failure must contain this; "" for no failure
	}{
		{"clean", []Output{{Type: "stream", Name: "stdout", Text: "1\nnot a panic: here\nthe exit status 0 is fine\n"}}, ""},
		{"panic in pieces", stderr("panic: ", "boom", "\n\ngoroutine 1 [running]:\nexit status 2\n"),
			"code cell 1 [%%]: Go failure on stderr: panic: boom"},
		{"os.Exit", stderr("exit status 3\n"), "Go failure on stderr: exit status 3"},
		{"os.Exit after text without newline", stderr("last words", "exit status 3\n"), "exit status 3"},
		{"killed", stderr("signal: killed\n"), "Go failure on stderr: signal: killed"},
		{"interrupted", stderr("^C\nsignal: interrupt\n"), "signal: interrupt"},
		{"crash after text without newline", stderr("loading…", "signal: segmentation fault (core dumped)\n"),
			"signal: segmentation fault (core dumped)"},
		{"runtime", stderr("fatal error: all goroutines are asleep - deadlock!\n"), "fatal error: all goroutines"},
		{"log line", stderr("handler for signal: SIGINT installed, 2 workers\n"), ""},
		{"error output", []Output{{Type: "error", EName: "ERROR", EValue: "undefined: x"}}, "error output: ERROR: undefined: x"},
	} {
		nb := &Notebook{Cells: []Cell{
			{Type: "markdown", Source: "# t"},
			{Type: "code", Source: "%%\nx()", Outputs: tc.outputs},
		}}
		got := Failures(nb)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: Failures = %q, want none", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: Failures = %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}

func TestCellName(t *testing.T) {
	long := strings.Repeat("é", 60)
	got := cellName(0, Cell{Source: Text("\n  " + long + "\nx")})
	if !utf8.ValidString(got) || got != "code cell 1 ["+strings.Repeat("é", 50)+"…]" {
		t.Errorf("cellName = %q", got)
	}
}

func TestCompare(t *testing.T) {
	s := NewSanitizer("/repo")
	committed := mustNotebook(t, `{"cells": [
	 {"cell_type": "code", "source": "a", "outputs": [{"output_type": "stream", "name": "stdout", "text": "x 1\ntook 3s\n"}]},
	 {"cell_type": "code", "source": "// nbtest: skip-compare\nb", "outputs": [{"output_type": "stream", "name": "stdout", "text": "7\n"}]},
	 {"cell_type": "code", "source": "c", "outputs": [
	   {"output_type": "display_data", "data": {"image/svg+xml": "<svg/>", "text/plain": "fig"}, "metadata": {}},
	   {"output_type": "stream", "name": "stdout", "text": "line 1\nline 2\nline 3\n"}]}
	]}`)
	same := mustNotebook(t, `{"cells": [
	 {"cell_type": "code", "source": "a", "outputs": [{"output_type": "display_data", "data": {"text/html": "<pre>cache: computed k in 1s</pre>", "text/plain": "cache: computed k in 1s\nprogress: r step 2/2"}, "metadata": {}}, {"output_type": "stream", "name": "stdout", "text": "x 1\ntook 450ms\n"}, {"output_type": "stream", "name": "stderr", "text": "progress: 1/2\n"}]},
	 {"cell_type": "code", "source": "// nbtest: skip-compare\nb", "outputs": [{"output_type": "stream", "name": "stdout", "text": "8\n"}]},
	 {"cell_type": "code", "source": "c", "outputs": [
	   {"output_type": "stream", "name": "stdout", "text": "line 1\nline 2\n"},
	   {"output_type": "display_data", "data": {"image/svg+xml": "<svg width=2/>", "text/plain": "fig"}, "metadata": {}},
	   {"output_type": "stream", "name": "stdout", "text": "line 3\n"}]}
	]}`)
	if d := Compare(committed, same, s); len(d) != 0 {
		t.Errorf("Compare found differences where the sanitizers should hide them:\n%s", strings.Join(d, "\n"))
	}
	changed := mustNotebook(t, `{"cells": [
	 {"cell_type": "code", "source": "a", "outputs": [{"output_type": "stream", "name": "stdout", "text": "x 2\ntook 3s\n"}]},
	 {"cell_type": "code", "source": "// nbtest: skip-compare\nb", "outputs": []},
	 {"cell_type": "code", "source": "c", "outputs": [{"output_type": "display_data", "data": {"text/plain": "cache: loaded k\nnot a notice"}, "metadata": {}}, {"output_type": "stream", "name": "stdout", "text": "line 1\nline 2\nline 3\n"}]}
	]}`)
	d := Compare(committed, changed, s)
	if len(d) != 2 {
		t.Fatalf("Compare = %d differences, want 2:\n%s", len(d), strings.Join(d, "\n"))
	}
	if !strings.Contains(d[0], "- x 1") || !strings.Contains(d[0], "+ x 2") || !strings.Contains(d[0], "code cell 1") {
		t.Errorf("diff of cell 1 = %s", d[0])
	}
	if !strings.Contains(d[1], "- [display image/svg+xml]") || !strings.Contains(d[1], "+ not a notice") {
		t.Errorf("a vanished figure, and a display that is not only notices, must show: %s", d[1])
	}
	if d := Compare(committed, mustNotebook(t, `{"cells": []}`), s); len(d) != 1 || !strings.Contains(d[0], "code cells") {
		t.Errorf("cell count change: %v", d)
	}
}

func TestDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9"
	want := "      3\n      4\n    - 5\n    + five\n      6\n      7"
	if got := Diff(a, b, 2, 40); got != want {
		t.Errorf("Diff =\n%s\nwant\n%s", got, want)
	}
}

func TestSelect(t *testing.T) {
	paths := []string{"nb/12.1-observations.ipynb", "nb/12.2-credit.ipynb", "nb/12.4-context.ipynb", "nb/12.10-late.ipynb"}
	for spec, want := range map[string]string{
		"":                         "nb/12.1-observations.ipynb nb/12.2-credit.ipynb nb/12.4-context.ipynb nb/12.10-late.ipynb",
		"12.10,12.2":               "nb/12.2-credit.ipynb nb/12.10-late.ipynb",
		"none":                     "",
		"12.4,12.1":                "nb/12.1-observations.ipynb nb/12.4-context.ipynb",
		"12.2-credit":              "nb/12.2-credit.ipynb",
		" 12.2-credit.ipynb, 12.2": "nb/12.2-credit.ipynb",
	} {
		got, err := Select(paths, spec)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("Select(%q) = %v, %v; want %s", spec, got, err, want)
		}
	}
	if _, err := Select(paths, "12.9"); err == nil {
		t.Error("Select of an unknown notebook must fail")
	}
	if Section("a/12.3-turn-budgets.ipynb") != "12.3" {
		t.Error("Section")
	}
	dir := t.TempDir()
	for _, n := range []string{"12.10-late.ipynb", "12.2-b.ipynb", "12.1-a.ipynb", "Untitled.ipynb", ".12.1-x.ipynb", "_scratch.ipynb"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Chapter(dir)
	var names []string
	for _, p := range got {
		names = append(names, filepath.Base(p))
	}
	if err != nil || strings.Join(names, " ") != "12.1-a.ipynb 12.2-b.ipynb 12.10-late.ipynb" {
		t.Errorf("Chapter = %v, %v", names, err)
	}
}

func TestMarkers(t *testing.T) {
	if !(Cell{Source: "\n// nbtest: skip-compare: timing\n%%"}).SkipsCompare() {
		t.Error("marker on the first line must skip")
	}
	if (Cell{Source: "%%\n// nbtest: skip-compare"}).SkipsCompare() {
		t.Error("marker below the first line must not skip")
	}
	nb := mustNotebook(t, `{"cells": [{"cell_type": "markdown", "source": ["# 12.3\n", "nbtest: draft"]}]}`)
	if !nb.Draft() {
		t.Error("draft marker in markdown")
	}
}

func TestStoreActivity(t *testing.T) {
	nb := mustNotebook(t, `{"cells": [
	 {"cell_type": "code", "source": "a", "outputs": [{"output_type": "display_data", "data": {"text/plain": "cache: loaded 3 stored results (a, b, c)\ncache: computed k in 4s\ncache: computed j in 1s but could not store it: full"}, "metadata": {}}]},
	 {"cell_type": "code", "source": "b", "outputs": [{"output_type": "display_data", "data": {"text/plain": "cache: loaded rl_base-1"}, "metadata": {}}, {"output_type": "stream", "name": "stdout", "text": "cache: computed not a notice\n"}]}
	]}`)
	if x := NewTiming("x.ipynb", &Result{Executed: nb}); x.Computed != 1 || x.Loaded != 4 {
		t.Errorf("NewTiming = %d computed, %d loaded; want 1, 4", x.Computed, x.Loaded)
	}
	results, _ := StoreActivity(nb)
	want := []Computed{{"k", 4 * time.Second, true}, {"j", time.Second, false}}
	if !slices.Equal(results, want) {
		t.Errorf("StoreActivity computed %v, want %v", results, want)
	}
}
