package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestJobs(t *testing.T) {
	for env, want := range map[string]int{"": DefaultJobs(), " 3 ": 3, "1": 1, "0": 0, "-2": 0, "all": 0} {
		t.Setenv(JobsEnv, env)
		got, err := Jobs()
		if got != want || (err == nil) != (want > 0) {
			t.Errorf("%s=%q: Jobs = %d, %v; want %d", JobsEnv, env, got, err, want)
		}
	}
	if DefaultJobs() < 1 {
		t.Errorf("DefaultJobs = %d", DefaultJobs())
	}
}

// TestForEach drives ForEach with calls that wait to be released: they start in order (each tells when it has), at
// most jobs at once, the next as soon as one ends, and one that fails (returns at once) stops no other.
func TestForEach(t *testing.T) {
	const n, jobs, failing = 7, 3, 1
	var mu sync.Mutex
	var entered []int
	release := make([]chan struct{}, n)
	for i := range release {
		release[i] = make(chan struct{})
	}
	enteredCh := make(chan int, n)
	running, most := 0, 0
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		started := ForEach(context.Background(), n, jobs, func(i int, started func()) {
			mu.Lock()
			entered = append(entered, i)
			running++
			most = max(most, running)
			mu.Unlock()
			enteredCh <- i
			started()
			if i != failing {
				<-release[i]
			}
			mu.Lock()
			running--
			mu.Unlock()
		})
		if started != n {
			t.Errorf("ForEach started %d, want %d", started, n)
		}
	}()
	// Three at once; the failing one ends at once, so 3 takes its place; then each release lets the next start.
	want := []int{0, 1, 2, 3}
	got := receive(t, enteredCh, 4)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("first calls %v, want %v", got, want)
	}
	assertNone(t, enteredCh) // 0, 2 and 3 hold the three slots
	for _, i := range []int{2, 0, 3} {
		close(release[i])
		if got := receive(t, enteredCh, 1); got[0] != want[len(want)-1]+1 {
			t.Fatalf("after releasing %d, call %d started, want %d", i, got[0], want[len(want)-1]+1)
		}
		want = append(want, want[len(want)-1]+1)
	}
	for _, i := range []int{4, 5, 6} {
		close(release[i])
	}
	<-finished
	if most > jobs {
		t.Errorf("%d calls at once, want at most %d", most, jobs)
	}
	if !slices.Equal(entered, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("calls began in the order %v, want all %d in order", entered, n)
	}
}

func receive(t *testing.T, ch chan int, k int) []int {
	t.Helper()
	var got []int
	for range k {
		select {
		case i := <-ch:
			got = append(got, i)
		case <-time.After(10 * time.Second):
			t.Fatalf("waited for a call: got %v", got)
		}
	}
	return got
}

func assertNone(t *testing.T, ch chan int) {
	t.Helper()
	select {
	case i := <-ch:
		t.Fatalf("call %d started, with every slot taken", i)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestForEachCancel: once the context is done, no call starts; those running end as they will.
func TestForEachCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var calls []int
	started := ForEach(ctx, 5, 2, func(i int, _ func()) {
		mu.Lock()
		calls = append(calls, i)
		mu.Unlock()
		if i == 1 {
			cancel()
		}
		time.Sleep(20 * time.Millisecond)
	})
	if started != 2 || len(calls) != 2 {
		t.Errorf("ForEach started %d (calls %v), want 2", started, calls)
	}
}

// writeNotebook writes a notebook of cells code cells (and a markdown cell and an empty code cell, which do not
// count) to dir/name.
func writeNotebook(t *testing.T, dir, name string, cells int) string {
	t.Helper()
	var cs []string
	cs = append(cs, `{"cell_type": "markdown", "source": "# x", "metadata": {}}`, `{"cell_type": "code", "source": "", "outputs": [], "execution_count": null, "metadata": {}}`)
	for i := range cells {
		cs = append(cs, fmt.Sprintf(`{"cell_type": "code", "source": "%%%%\nfmt.Println(%d)", "outputs": [], "execution_count": null, "metadata": {}}`, i))
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(`{"cells": [`+strings.Join(cs, ",")+`], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProgress follows a run of three notebooks, two at once, on a clock of its own: the line, the estimate from the
// last run's times (scaled by this run's) and from cells, and one printed line per change away from a terminal.
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	paths := []string{writeNotebook(t, dir, "12.1-a.ipynb", 2), writeNotebook(t, dir, "12.2-b.ipynb", 4),
		writeNotebook(t, dir, "12.3-c.ipynb", 2), writeNotebook(t, dir, "12.4-d.ipynb", 1)}
	prior := map[string]time.Duration{"12.1-a.ipynb": 60 * time.Second, "12.2-b.ipynb": 120 * time.Second}
	var out, log bytes.Buffer
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	now := t0
	p := NewProgress(&out, paths, 2, prior)
	p.now = func() time.Time { return now }
	p.start = t0
	at := func(s int) { now = t0.Add(time.Duration(s) * time.Second) }
	check := func(want string) {
		t.Helper()
		if got := p.Line(); got != want {
			t.Errorf("line\n  %s\nwant\n  %s", got, want)
		}
	}

	p.Skip(3) // filtered out: not counted
	// c has no time of its own: the last run's time per cell, (60+120)/(2+4) = 30s, makes it 60s; a and b on the two
	// slots, then c after a.
	check("chapter: 0/3 done | elapsed 0s | about 2m left")
	p.Start(0)
	p.Start(1)
	a := p.Output(0, &log)
	at(30)
	fmt.Fprint(a, "nbexec: cell 1/2 [%%] 30.0s\ncache: waiting for rl_base")
	check("chapter: 0/3 done, running 12.1 (cell 2/2), 12.2 (cell 1/4) | elapsed 30s | about 2m left")
	a.Flush()
	at(40)
	p.Finish(0, false) // 40s where the last run took 60s: the rest is expected to take 2/3 of its time too
	p.Start(2)
	// b: 120s × 2/3 = 80s, 40s of it gone; c: this run's 20s a cell (a's 40s for 2) × 2 cells.
	check("chapter: 1/3 done, running 12.2 (cell 1/4), 12.3 (cell 1/2) | elapsed 40s | about 40s left")
	at(100) // b is past its 80s: its 4 cells at 20s
	check("chapter: 1/3 done, running 12.2 (cell 1/4), 12.3 (cell 1/2) | elapsed 1m40s | about 1m20s left")
	p.Finish(1, true)
	at(125)
	p.Finish(2, false)
	p.Close()
	check("chapter: 3/3 done (1 failed) | elapsed 2m05s")

	wantLog := "12.1: nbexec: cell 1/2 [%%] 30.0s\n12.1: cache: waiting for rl_base\n"
	if log.String() != wantLog {
		t.Errorf("log\n%s\nwant\n%s", log.String(), wantLog)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	wantLines := []string{
		"chapter: 0/3 done, running 12.1 (cell 1/2) | elapsed 0s | about 2m left",
		"chapter: 0/3 done, running 12.1 (cell 1/2), 12.2 (cell 1/4) | elapsed 0s | about 2m left",
		"chapter: 0/3 done, running 12.1 (cell 2/2), 12.2 (cell 1/4) | elapsed 30s | about 2m left",
		"chapter: 1/3 done, running 12.2 (cell 1/4) | elapsed 40s | about 40s left",
		"chapter: 1/3 done, running 12.2 (cell 1/4), 12.3 (cell 1/2) | elapsed 40s | about 40s left",
		"chapter: 2/3 done (1 failed), running 12.3 (cell 1/2) | elapsed 1m40s | about 40s left",
		"chapter: 3/3 done (1 failed) | elapsed 2m05s",
	}
	if !slices.Equal(lines, wantLines) {
		t.Errorf("printed\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
}

func TestProgressWithoutTimes(t *testing.T) {
	dir := t.TempDir()
	paths := []string{writeNotebook(t, dir, "12.1-a.ipynb", 3), writeNotebook(t, dir, "12.2-b.ipynb", 3)}
	var out bytes.Buffer
	t0 := time.Now()
	now := t0
	p := NewProgress(&out, paths, 1, nil)
	p.now, p.start = func() time.Time { return now }, t0
	p.Start(0)
	unknown := "time left unknown (no times recorded for these notebooks)"
	if got, want := p.Line(), "chapter: 0/2 done, running 12.1 (cell 1/3) | elapsed 0s | "+unknown; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	now = t0.Add(10 * time.Second)
	fmt.Fprintln(p.Output(0, &bytes.Buffer{}), "nbexec: cell 1/3 [x] 10.0s")
	// A cell's 10 s says nothing of the next cell's: still unknown, never a guess from it.
	if got, want := p.Line(), "chapter: 0/2 done, running 12.1 (cell 2/3) | elapsed 10s | "+unknown; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	p.Close()
}

// TestExpected estimates a fresh clone's run from the committed outputs: what a notebook's status blocks say it
// computed or loaded (at the time the notebook that computed it took), less what the store holds now; the last
// run's time wins where there is one.
func TestExpected(t *testing.T) {
	dir := t.TempDir()
	nb := func(name, status string) string {
		path := filepath.Join(dir, name)
		text, _ := json.Marshal(status)
		doc := `{"cells": [{"cell_type": "code", "source": "%%", "metadata": {}, "execution_count": 1, "outputs": [` +
			`{"output_type": "display_data", "metadata": {}, "data": {"text/plain": ` + string(text) + `}}]}],` +
			`"metadata": {}, "nbformat": 4, "nbformat_minor": 5}`
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	paths := []string{
		nb("12.1-a.ipynb", "cache: computed rl_base-1 in 2m0s\ncache: computed held_out-2 in 30s"),
		nb("12.2-b.ipynb", "cache: loaded rl_base-1\ncache: computed train_grpo-3 in 1m0s"),
		nb("12.3-c.ipynb", "cache: loaded 3 stored results (rl_base-1, train_grpo-3 and 1 more)"),
		nb("12.4-d.ipynb", "cache: computed train_grpo-4 in 40s"),
	}
	stored := func(key string) bool { return key == "held_out-2" || key == "train_grpo-4" }
	// Run alone, c needs the base agent and b's run, which the store does not hold: it computes them or waits.
	if got := Expected(paths[2:3], nil, stored, paths); !maps.Equal(got, map[string]time.Duration{"12.3-c.ipynb": 3 * time.Minute}) {
		t.Errorf("c alone: %v, want 3m", got)
	}
	// With b (its time recorded: 5s) c's share is the base agent only: b computes its run.
	got := Expected(paths[1:], map[string]time.Duration{"12.2-b.ipynb": 5 * time.Second}, stored, paths)
	want := map[string]time.Duration{"12.2-b.ipynb": 5 * time.Second, "12.3-c.ipynb": 2 * time.Minute}
	if !maps.Equal(got, want) {
		t.Errorf("Expected = %v, want %v", got, want)
	}
	// The chapter on an empty store: each result once, where the committed run computed it.
	if got := Expected(paths, nil, nil, nil); !maps.Equal(got, map[string]time.Duration{"12.1-a.ipynb": 150 * time.Second,
		"12.2-b.ipynb": time.Minute, "12.4-d.ipynb": 40 * time.Second}) {
		t.Errorf("an empty store: %v", got)
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0s", 1499 * time.Millisecond: "1s", 250 * time.Second: "4m10s",
		3725 * time.Second: "1h02m"} {
		if got := clock(d); got != want {
			t.Errorf("clock(%v) = %q, want %q", d, got, want)
		}
	}
	for d, want := range map[time.Duration]string{0: "10s", 41 * time.Second: "50s", 89 * time.Second: "1m30s",
		100 * time.Second: "2m", 6 * time.Minute: "6m", 65 * time.Minute: "1h05m"} {
		if got := about(d); got != want {
			t.Errorf("about(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestTimesFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), TimesFile)
	ts := []Timing{{"12.1-a.ipynb", 12300 * time.Millisecond, 2, 0}, {"12.2-b.ipynb", 4 * time.Second, 0, 5}}
	if err := WriteTimes(file, ts, 14*time.Second, 2); err != nil {
		t.Fatal(err)
	}
	got := ReadTimes(file)
	want := map[string]time.Duration{"12.1-a.ipynb": 12300 * time.Millisecond, "12.2-b.ipynb": 4 * time.Second}
	if len(got) != len(want) || got["12.1-a.ipynb"] != want["12.1-a.ipynb"] || got["12.2-b.ipynb"] != want["12.2-b.ipynb"] {
		t.Errorf("ReadTimes = %v, want %v", got, want)
	}
	if ReadTimes(filepath.Join(t.TempDir(), "none")) != nil {
		t.Error("ReadTimes of a missing file: want nil")
	}
}

// TestSideBySide executes two of the harness's tiny notebooks through Jupyter at once, as TestNotebooks executes the
// chapter's: they overlap, and each comes out as it does alone (TestHarness).
func TestSideBySide(t *testing.T) {
	r := newRunner(t)
	ctx := testContext(t)
	san := NewSanitizer("")
	paths := []string{filepath.Join("testdata", "pass.ipynb"), filepath.Join("testdata", "changed.ipynb")}
	var progress lineLogger
	progress.t = t
	prog := NewProgress(&progress, paths, 2, nil)
	type span struct{ start, end time.Time }
	spans := make([]span, len(paths))
	results := make([]*Result, len(paths))
	errs := make([]error, len(paths))
	var log bytes.Buffer
	var logMu sync.Mutex
	start := time.Now()
	ForEach(ctx, len(paths), 2, func(i int, started func()) {
		spans[i].start = time.Now()
		prog.Start(i)
		started()
		nbLog := prog.Output(i, writerFunc(func(b []byte) (int, error) {
			logMu.Lock()
			defer logMu.Unlock()
			return log.Write(b)
		}))
		results[i], errs[i] = r.WithLog(nbLog).Check(ctx, paths[i], filepath.Join(t.TempDir()), san)
		nbLog.Flush()
		prog.Finish(i, errs[i] != nil)
		spans[i].end = time.Now()
	})
	prog.Close()
	t.Logf("two notebooks side by side: %.1fs (%.1fs and %.1fs)", time.Since(start).Seconds(),
		spans[0].end.Sub(spans[0].start).Seconds(), spans[1].end.Sub(spans[1].start).Seconds())
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", paths[i], err)
		}
	}
	if !spans[1].start.Before(spans[0].end) || !spans[0].start.Before(spans[1].end) {
		t.Errorf("the two did not run at once: %v", spans)
	}
	pass, changed := results[0], results[1]
	if len(pass.Failures)+len(pass.Diffs) > 0 || !pass.OK() {
		t.Errorf("pass.ipynb: failures %q, diffs %q", pass.Failures, pass.Diffs)
	}
	if diffs := strings.Join(changed.Diffs, "\n"); len(changed.Failures) > 0 || !strings.Contains(diffs, "- answer 41\n    + answer 42") {
		t.Errorf("changed.ipynb: failures %q, diffs:\n%s", changed.Failures, diffs)
	}
	for _, want := range []string{"pass: nbexec: cell 1/", "changed: nbexec: cell 1/"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// TestLongestFirst: with several jobs the notebooks start longest first by the last run's times when it has every
// notebook's, else by the compute times their committed outputs record; with one job, in the given order.
func TestLongestFirst(t *testing.T) {
	chapter, err := Chapter("..")
	if err != nil {
		t.Fatal(err)
	}
	base := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = strings.TrimSuffix(filepath.Base(p), ".ipynb")[:4]
		}
		return out
	}
	s := time.Second
	all := map[string]time.Duration{}
	for i, p := range chapter { // the chapter's order reversed: 12.7 the longest
		all[filepath.Base(p)] = time.Duration(i+1) * s
	}
	partial := map[string]time.Duration{filepath.Base(chapter[0]): 100 * s}
	committed := slices.Clone(chapter)
	slices.SortStableFunc(committed, func(a, b string) int { return int(committedCompute(b) - committedCompute(a)) })
	for _, tc := range []struct {
		name  string
		jobs  int
		prior map[string]time.Duration
		want  []string
	}{
		{"one job keeps the order", 1, all, base(chapter)},
		{"last run's times", 2, all, []string{"12.7", "12.6", "12.5", "12.4", "12.3", "12.2", "12.1"}},
		{"a time missing: the committed outputs' compute times", 2, partial, base(committed)},
		{"no times", 3, nil, base(committed)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := base(LongestFirst(chapter, tc.jobs, tc.prior)); !slices.Equal(got, tc.want) {
				t.Errorf("LongestFirst = %v, want %v", got, tc.want)
			}
		})
	}
	if c := base(committed); c[0] != "12.3" && c[0] != "12.7" {
		t.Errorf("by the committed outputs %v: want 12.3 or 12.7, the chapter's longest, first", c)
	}
}
