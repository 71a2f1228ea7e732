package harness

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/notebooks/harness/bookreport"
	"github.com/agentrl-go/agentrl/store"
)

// newRunner returns a Runner logging to t, or fails (skips only under AGENTRL_NOTEBOOKS_OPTIONAL=1) when
// Jupyter or the GoNB kernel is missing. Under -short it skips: the quick test mode executes no notebook.
func newRunner(t *testing.T) *Runner {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no notebook is executed")
	}
	r, err := NewRunner()
	if err != nil {
		if errors.Is(err, ErrNoJupyter) && os.Getenv("AGENTRL_NOTEBOOKS_OPTIONAL") == "1" {
			t.Skipf("skipping notebook execution (AGENTRL_NOTEBOOKS_OPTIONAL=1): %v", err)
		}
		t.Fatalf("%v\n(set AGENTRL_NOTEBOOKS_OPTIONAL=1 to skip notebook execution where Jupyter is absent)", err)
	}
	r.Log = &lineLogger{t: t}
	return r
}

// lineLogger passes whole lines to t.Log.
type lineLogger struct {
	t   *testing.T
	mu  sync.Mutex
	buf []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.t.Log(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

// testContext ends a little before the test binary's deadline, so a hanging kernel fails the test with a message.
func testContext(t *testing.T) context.Context {
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		c, cancel := context.WithDeadline(ctx, d.Add(-30*time.Second))
		t.Cleanup(cancel)
		ctx = c
	}
	return ctx
}

// trackInputs reads the repository's Go sources, go.mod and go.sum, so that `go test`'s result cache (which
// remembers the files a test opened) reruns the notebooks when the library they import changes.
func trackInputs(t *testing.T, root string) {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if n := d.Name(); strings.HasSuffix(n, ".go") || n == "go.mod" || n == "go.sum" {
			_, err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHarness checks the harness itself on tiny notebooks that need only GoNB.
func TestHarness(t *testing.T) {
	r := newRunner(t)
	ctx := testContext(t)
	san := NewSanitizer("")
	out := t.TempDir()
	for _, tc := range []struct {
		name    string
		failure string // a failure must contain this ("" for none)
		diff    string // a diff must contain this ("" for none)
		exact   bool   // the diffs gate: the committed outputs do not say they were computed elsewhere
	}{
		{"pass", "", "", true},
		{"panic", "panic: boom", "", true},
		{"exit", "exit status 3", "", true},
		{"compile_error", "undefined: undefinedFunction", "", true},
		{"changed", "", "- answer 41\n    + answer 42", true},
		{"elsewhere", "", "computed under xla/cpu=a processor of another kind", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Check(ctx, filepath.Join("testdata", tc.name+".ipynb"), out, san)
			if err != nil {
				if res != nil {
					t.Errorf("failures before it stopped: %q", res.Failures)
				}
				t.Fatal(err)
			}
			failures, diffs := strings.Join(res.Failures, "\n"), strings.Join(res.Diffs, "\n")
			if (tc.failure == "") != (failures == "") || !strings.Contains(failures, tc.failure) {
				t.Errorf("failures:\n%s\nwant one containing %q", failures, tc.failure)
			}
			if (tc.diff == "") != (diffs == "") || !strings.Contains(diffs, tc.diff) {
				t.Errorf("diffs:\n%s\nwant one containing %q", diffs, tc.diff)
			}
			if res.Exact != tc.exact || res.OK() != (tc.failure == "" && (tc.diff == "" || !tc.exact)) {
				t.Errorf("Exact = %v, OK = %v; want Exact %v", res.Exact, res.OK(), tc.exact)
			}
			if prov := res.Executed.Metadata.Agentrl; prov == nil || *prov != Here() {
				t.Errorf("the executed notebook records provenance %v, want %v", prov, Here())
			}
		})
	}
}

// The book-vs-run report of the committed outputs, and that of a test run which did not reproduce all of them.
const (
	reportFile    = "../REPORT.md"
	runReportFile = "../REPORT.run.md" // ignored by git
)

// TestReportFiles: only a run that reproduced every committed output writes the committed REPORT.md.
func TestReportFiles(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		all, resampled        bool
		wantWrite, wantRemove string
	}{
		{"every notebook, committed numerics", true, false, reportFile, runReportFile},
		{"every notebook, other numerics", true, true, runReportFile, ""},
		{"some notebooks, committed numerics", false, false, runReportFile, ""},
		{"some notebooks, other numerics", false, true, runReportFile, ""},
	} {
		if write, remove := reportFiles(tc.all, tc.resampled); write != tc.wantWrite || remove != tc.wantRemove {
			t.Errorf("%s: reportFiles = %q, %q; want %q, %q", tc.name, write, remove, tc.wantWrite, tc.wantRemove)
		}
	}
}

// reportFiles says where a test run writes its report and which earlier report it removes (none when remove is
// ""), given whether it executed every notebook and whether some were computed under other numerics than their
// committed outputs. The committed REPORT.md is the committed outputs' report: only a run that reproduces all of
// them writes it (and so shows, as a diff, any drift of the report's own code), and it removes an earlier run's
// REPORT.run.md, which would be stale. Any other run writes REPORT.run.md, so that running the tests on another
// processor, or on some notebooks, leaves the tracked files as they were.
func reportFiles(all, resampled bool) (write, remove string) {
	if all && !resampled {
		return reportFile, runReportFile
	}
	return runReportFile, ""
}

// TestNotebooks executes the chapter's notebooks (AGENTRL_NOTEBOOKS selects some), up to AGENTRL_NOTEBOOK_JOBS at once
// (see DefaultJobs) with one progress line for the chapter in its log, checks each in a subtest of its own, and writes
// the book-vs-run report, failing on its class 1 and class 3 rules: to REPORT.md when the run executed every notebook
// under the numerics of its committed outputs, else to REPORT.run.md.
func TestNotebooks(t *testing.T) {
	paths, err := Chapter("..")
	if err != nil {
		t.Fatal(err)
	}
	selected, err := Select(paths, os.Getenv("AGENTRL_NOTEBOOKS"))
	if err != nil {
		t.Fatalf("AGENTRL_NOTEBOOKS: %v", err)
	}
	if len(selected) == 0 {
		t.Skip("no notebook selected")
	}
	r := newRunner(t)
	ctx := testContext(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	trackInputs(t, root)
	san, out := NewSanitizer(root), t.TempDir()

	// The notebooks run side by side, AGENTRL_NOTEBOOK_JOBS (default: one for every core) at once, the longest
	// first, each in a subtest of its own; the result store lets no two compute the same result.
	jobs, err := Jobs()
	if err != nil {
		t.Fatal(err)
	}
	var stored func(string) bool
	if s, err := store.Default(); err == nil {
		stored = StoredIn(s)
	}
	chapter, _ := filepath.Glob(filepath.Join("..", "12.*.ipynb"))
	prior := Expected(selected, ReadTimes(filepath.Join("..", TimesFile)), stored, chapter)
	selected = LongestFirst(selected, jobs, prior)
	var mu sync.Mutex // guards executed, resampled and times
	executed := map[string]*Notebook{}
	resampled := false // some notebook was computed under other numerics than its committed outputs
	times := make([]*Timing, len(selected))
	prog := NewProgress(&lineLogger{t: t}, selected, jobs, prior)
	start := time.Now()
	defer func() {
		prog.Close()
		var ts []Timing
		for _, x := range times {
			if x != nil {
				ts = append(ts, *x)
			}
		}
		if err := WriteTimes(filepath.Join("..", TimesFile), ts, time.Since(start), jobs); err != nil {
			t.Errorf("writing %s: %v", TimesFile, err)
		}
	}()
	ForEach(ctx, len(selected), jobs, func(i int, started func()) {
		p := selected[i]
		t.Run(strings.TrimSuffix(filepath.Base(p), ".ipynb"), func(t *testing.T) {
			prog.Start(i)
			started()
			defer func() { prog.Finish(i, t.Failed()) }()
			log := prog.Output(i, &lineLogger{t: t})
			res, err := r.WithLog(log).Check(ctx, p, out, san)
			log.Flush()
			if res != nil {
				t.Logf("%s executed in %.1fs", filepath.Base(p), res.Wall.Seconds())
				x := NewTiming(filepath.Base(p), res)
				mu.Lock()
				times[i] = &x
				mu.Unlock()
			}
			if err != nil {
				if res != nil {
					for _, f := range res.Failures { // of the cells that ran before it stopped
						t.Error(f)
					}
				}
				t.Fatal(err)
			}
			for _, f := range res.Failures {
				t.Error(f)
			}
			for _, d := range res.Diffs {
				if res.Exact {
					t.Error(d)
				} else {
					t.Log(d) // computed under other Numerics: expected, and the report's rules gate
				}
			}
			res.Executed.Path = p
			mu.Lock()
			executed[p] = res.Executed
			resampled = resampled || !res.Exact
			mu.Unlock()
		})
		prog.Skip(i) // filtered out by -run: never started
	})
	if ctx.Err() != nil {
		t.Fatalf("stopped: %v", ctx.Err())
	}

	var nbs []*Notebook
	sources := map[string]string{}
	for _, p := range paths {
		nb, ok := executed[p]
		if ok {
			sources[Section(p)] = "executed"
		} else if nb, err = Load(p); err != nil {
			t.Fatal(err)
		} else {
			sources[Section(p)] = "committed (not executed in this run)"
		}
		nbs = append(nbs, nb)
	}
	if len(executed) == len(paths) {
		sources = nil // the usual case: say nothing, so the file matches the one the execute command writes
	}
	rep := chapterReport(nbs)
	rep.JudgeBySeeds()
	if resampled {
		rep.MarkResampled()
	}
	report, stale := reportFiles(len(executed) == len(paths), resampled)
	if err := os.WriteFile(report, []byte(rep.Markdown(sources)), 0o644); err != nil {
		t.Fatal(err)
	}
	if stale != "" {
		if err := os.Remove(stale); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	t.Logf("book-vs-run report: notebooks/%s", filepath.Base(report))
	for _, f := range rep.Failures() {
		t.Error("book-vs-run: " + f)
	}
	for _, f := range rep.ResampledFailures() {
		t.Log("book-vs-run, another realization (not gating): " + f)
	}
}

// TestCommittedNotebooks needs no Jupyter: the committed notebooks are executed, all under one Numerics, show no
// failure, and their printed lines pass the report's class 1 and class 3 rules.
func TestCommittedNotebooks(t *testing.T) {
	paths, err := Chapter("..")
	if err != nil {
		t.Fatal(err)
	}
	var nbs []*Notebook
	for _, p := range paths {
		nb, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range nb.CodeCells() {
			if c.ExecutionCount == nil && strings.TrimSpace(string(c.Source)) != "" {
				t.Errorf("%s: %s was never executed: run `go run ./cmd/execute %s` and commit the result",
					p, cellName(i, c), Section(p))
			}
		}
		for _, f := range Failures(nb) {
			t.Errorf("%s: %s", p, f)
		}
		nbs = append(nbs, nb)
	}
	rep := chapterReport(nbs)
	rep.JudgeBySeeds()
	if secs, ok := rep.Numerics["unrecorded"]; ok {
		t.Errorf("the metadata of §%s does not say what computed their outputs: run `go run ./cmd/execute` "+
			"and commit the result", strings.Join(secs, ", §"))
	}
	if len(rep.Numerics) > 1 { // the notebooks share runs through the cache, and the report compares across them
		t.Errorf("the committed notebooks were computed under different Numerics, not as one chapter: %v; "+
			"execute them all on one machine (`go run ./cmd/execute`) and commit the result", rep.Numerics)
	}
	for _, f := range rep.Failures() {
		t.Error("book-vs-run (committed outputs): " + f)
	}
	if rep.Complete() { // with a section missing, its deviations cannot show
		for _, k := range rep.StaleDeviations() {
			t.Errorf("known deviation %q (notebooks/harness/bookreport/deviations.md) matches no failing check: remove it", k)
		}
	}
}

// chapterReport evaluates the book-vs-run report on what the notebooks printed.
func chapterReport(nbs []*Notebook) *bookreport.Report {
	secs := map[string]bookreport.SectionOutput{}
	for sec, so := range Sections(nbs) {
		secs[sec] = bookreport.SectionOutput(so)
	}
	return bookreport.Evaluate(secs)
}
