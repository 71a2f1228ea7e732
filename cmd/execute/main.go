// Command execute runs the chapter's notebooks through Jupyter and the GoNB kernel and writes each executed
// notebook over the committed one (outputs exactly as executed), printing per-notebook wall time; then it
// regenerates notebooks/REPORT.md, the book-vs-run report. A notebook that could not be executed to the end or
// shows a failure is not written: the committed one stays.
//
//	go run ./cmd/execute               # every notebooks/*.ipynb
//	go run ./cmd/execute 12.1 12.4     # by section or file name
//	go run ./cmd/execute path/x.ipynb  # any notebook file (the report is not touched)
//	go run ./cmd/execute -report       # only rewrite the report from the committed notebooks
//	go run ./cmd/execute -jobs 3       # three notebooks at once (default: one for every core)
//
// The notebooks are started longest first (harness.LongestFirst), up to -jobs at once ($AGENTRL_NOTEBOOK_JOBS
// without the flag, else one for every core), each on its own kernel; the result store lets no two compute the
// same result, so each notebook's outputs are those it would have one after another. One line on stderr tells the
// chapter's progress, what is left and about how long (from the times in notebooks/TIMES.run.txt, which the command
// and the notebook test write).
//
// It exits non-zero if a notebook could not be executed or shows a failure (error output, Go panic, exit status),
// or if the report fails (a class 1 rule, or a missing line; class 3 rules are judged by seeds, bookreport.Report.JudgeBySeeds). SIGINT or SIGTERM stops it: the running
// kernels are shut down and nothing more is written. Killed otherwise (SIGKILL included, of it or of its process
// group), it leaves no process behind on Linux: each notebook's watchdog kills its kernel and all it started
// (harness.Runner.Execute).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentrl-go/agentrl/notebooks/harness"
	"github.com/agentrl-go/agentrl/notebooks/harness/bookreport"
	"github.com/agentrl-go/agentrl/store"
)

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: go run ./cmd/execute [flags] [section|name|path.ipynb ...]

Executes the chapter's notebooks (all of notebooks/*.ipynb, or those named by section such as 12.4, by name or by
path) headless through Jupyter and the GoNB kernel, writes each executed notebook over its file (outputs exactly as
executed) and prints its wall time, then regenerates notebooks/REPORT.md, the book-vs-run report (not for a
notebook given by path). Up to -jobs notebooks execute at once, the longest expected started first, with one
progress line on stderr.
A notebook whose execution shows a failure is not written; the command exits non-zero then, and when the report
fails a class 1 rule or misses a line (a mechanism, class 3, is judged by its count over seeds). Ctrl-C shuts the running kernels down and writes nothing more.

Flags:
`)
		flag.PrintDefaults()
	}
	reportOnly := flag.Bool("report", false, "execute nothing: rewrite notebooks/REPORT.md from the committed notebooks")
	jobs := flag.Int("jobs", 0, fmt.Sprintf("how many notebooks to execute at once, the longest first (0: $%s, else one "+
		"for every core: %d here)", harness.JobsEnv, harness.DefaultJobs()))
	flag.Parse()
	if *reportOnly && flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "execute: -report takes no notebooks")
		os.Exit(2)
	}
	if *jobs < 0 {
		fmt.Fprintln(os.Stderr, "execute: -jobs must be positive (or 0 for the default)")
		os.Exit(2)
	}
	if *jobs == 0 {
		n, err := harness.Jobs()
		if err != nil {
			fmt.Fprintln(os.Stderr, "execute:", err)
			os.Exit(2)
		}
		*jobs = n
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, flag.Args(), *reportOnly, *jobs)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "execute:", err)
		os.Exit(1)
	}
}

// run executes the notebooks named by args (all of the chapter's when there are none) and rewrites the report
// when one of the chapter's notebooks was written; with reportOnly it only rewrites the report. It returns the
// joined errors of the notebooks that failed and of the report, or the first error that stops it.
func run(ctx context.Context, args []string, reportOnly bool, jobs int) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "notebooks")
	chapter, err := harness.Chapter(dir)
	if err != nil {
		return err
	}

	if reportOnly {
		return writeReport(dir, chapter)
	}

	paths, err := notebookPaths(args, dir, chapter)
	if err != nil {
		return err
	}
	failed, touchedChapter, err := executeAll(ctx, root, paths, chapter, jobs)
	if err != nil {
		return err
	}

	var errs []error
	if failed > 0 {
		errs = append(errs, fmt.Errorf("%d of %d notebooks failed", failed, len(paths)))
	}
	if touchedChapter {
		errs = append(errs, writeReport(dir, chapter))
	}
	return errors.Join(errs...)
}

// moduleRoot returns the folder of the repository's go.mod, as `go env GOMOD` finds it from the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run it from inside the repository (go env GOMOD found no module)")
	}
	return filepath.Dir(gomod), nil
}

// notebookPaths returns the notebooks that args name. An arg ending in .ipynb that names an existing file is taken
// as is; the others are sections or names, which select from chapter (see [harness.Select]) after those files.
// With no args, all of chapter is selected. It fails when a name matches nothing, or when that leaves no notebook
// ("no notebooks in dir").
func notebookPaths(args []string, dir string, chapter []string) ([]string, error) {
	var paths, names []string
	for _, a := range args {
		if strings.HasSuffix(a, ".ipynb") {
			if _, err := os.Stat(a); err == nil {
				paths = append(paths, a)
				continue
			}
		}
		names = append(names, a)
	}
	if len(names) > 0 || len(paths) == 0 {
		sel, err := harness.Select(chapter, strings.Join(names, ","))
		if err != nil {
			return nil, err
		}
		paths = append(paths, sel...)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no notebooks in %s", dir)
	}
	return paths, nil
}

// executeAll executes the notebooks at paths with one runner, up to jobs at once (see executeParallel), with the
// chapter's progress line on stderr, then prints the total wall time and writes the notebooks' times for the next
// run's estimate (TIMES.run.txt, when some of chapter's were executed). It returns how many were not written, and
// whether one of chapter's was (touched). Its error is one that stops it: the runner or its temporary folder could not
// be made, ctx was cancelled, or a notebook was not saved.
func executeAll(ctx context.Context, root string, paths, chapter []string, jobs int) (failed int, touched bool, err error) {
	r, err := harness.NewRunner()
	if err != nil {
		return 0, false, err
	}
	tmp, err := os.MkdirTemp("", "nbexecute-")
	if err != nil {
		return 0, false, err
	}
	defer os.RemoveAll(tmp)
	san := harness.NewSanitizer(root)
	check := func(ctx context.Context, i int, log io.Writer) (*harness.Result, error) {
		dir := filepath.Join(tmp, strconv.Itoa(i)) // two notebooks given by path may share a name
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		return r.WithLog(log).Check(ctx, paths[i], dir, san)
	}

	timesFile := filepath.Join(root, "notebooks", harness.TimesFile)
	prior := harness.Expected(paths, harness.ReadTimes(timesFile), storedKeys(), chapter)
	paths = harness.LongestFirst(paths, jobs, prior)
	prog := harness.NewProgress(os.Stderr, paths, jobs, prior)
	start := time.Now()
	outcomes, err := executeParallel(ctx, paths, jobs, check, prog, os.Stdout, os.Stderr)
	wall := time.Since(start)
	prog.Close()
	var times []harness.Timing
	for i, o := range outcomes {
		inChapter := slices.Contains(chapter, absPath(paths[i])) // a scratch notebook beside them is not
		if !o.written {
			failed++
		} else if inChapter {
			touched = true
		}
		if inChapter && o.res != nil && o.res.Executed != nil {
			times = append(times, harness.NewTiming(filepath.Base(paths[i]), o.res))
		}
	}
	if err != nil {
		return failed, touched, err
	}
	fmt.Printf("total %.1fs (%d at once)\n", wall.Seconds(), min(jobs, len(paths)))
	if werr := harness.WriteTimes(timesFile, times, wall, jobs); werr != nil {
		fmt.Fprintln(os.Stderr, "execute: the times for the next run's estimate:", werr)
	}
	return failed, touched, nil
}

// checkFunc executes the i-th notebook into a file of its own, logging to log.
type checkFunc func(ctx context.Context, i int, log io.Writer) (*harness.Result, error)

// outcome is what executing one notebook came to.
type outcome struct {
	res     *harness.Result // nil: not executed (or not started)
	written bool            // the executed notebook was saved over the committed one
}

// executeParallel executes the notebooks at paths with check, up to jobs at once, started in the order of paths
// ([harness.ForEach]); each is saved over its file as soon as it ends without failures (see executeOne), whatever
// the others do. Their logs go to log through prog, prefixed with their sections, and each notebook's lines about
// its result to out when it ends. The error is a cancelled ctx, which stops the running notebooks (their kernels are
// shut down) and starts no more, with nothing more written; or a notebook that could not be saved.
func executeParallel(ctx context.Context, paths []string, jobs int, check checkFunc, prog *harness.Progress,
	out, log io.Writer) ([]outcome, error) {
	outcomes := make([]outcome, len(paths))
	var mu sync.Mutex
	var errs []error
	var stopped []string
	harness.ForEach(ctx, len(paths), jobs, func(i int, started func()) {
		prog.Start(i)
		started()
		nbLog := prog.Output(i, log)
		res, err := check(ctx, i, nbLog)
		nbLog.Flush()
		if ctx.Err() != nil {
			prog.Finish(i, true)
			mu.Lock()
			outcomes[i].res = res
			stopped = append(stopped, paths[i])
			mu.Unlock()
			return
		}
		var b strings.Builder
		written, err := executeOne(&b, res, err, paths[i])
		prog.Finish(i, !written)
		prog.Print(out, b.String())
		mu.Lock()
		outcomes[i] = outcome{res, written}
		if err != nil {
			errs = append(errs, err)
		}
		mu.Unlock()
	})
	if ctx.Err() != nil {
		slices.Sort(stopped)
		errs = append(errs, fmt.Errorf("stopped (%v) while executing %s: nothing more written", context.Cause(ctx),
			strings.Join(stopped, ", ")))
	}
	return outcomes, errors.Join(errs...)
}

// executeOne writes to w what executing the notebook at p came to, its path first: res and err are what
// [harness.Runner.Check] returned. It saves the executed notebook over p unless it shows failures (see save). A
// notebook that could not be executed to the end is not written: its error and the failures of the cells that ran
// are printed. executeOne reports whether it wrote p; its error is a failure to write p.
func executeOne(w io.Writer, res *harness.Result, err error, p string) (bool, error) {
	fmt.Fprintf(w, "== %s\n", p)
	if err != nil {
		fmt.Fprintf(w, "%s: not written: %v\n", filepath.Base(p), err)
		if res != nil {
			for _, f := range res.Failures { // of the cells that ran before it stopped
				fmt.Fprintln(w, "  "+f)
			}
		}
		return false, nil
	}
	return save(w, res, p)
}

// save writes the executed notebook of res over dst unless it shows failures, and prints one line about it (and
// the failures). It reports whether it wrote dst.
func save(w io.Writer, res *harness.Result, dst string) (bool, error) {
	state := "ok"
	switch {
	case len(res.Failures) > 0:
		state = fmt.Sprintf("%d FAILURES (not written)", len(res.Failures))
	case len(res.Diffs) > 0:
		state = fmt.Sprintf("outputs changed in %d cells (now written)", len(res.Diffs))
	}
	fmt.Fprintf(w, "%-45s %7.1fs  %s\n", filepath.Base(dst), res.Wall.Seconds(), state)
	for _, f := range res.Failures {
		fmt.Fprintln(w, "  "+f)
	}
	if len(res.Failures) > 0 {
		return false, nil
	}
	return true, copyFile(res.File, dst)
}

// absPath returns p made absolute, or p itself when the working directory is unknown.
func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

// writeReport evaluates the chapter's notebooks as committed and writes dir/REPORT.md, listing the failures; it
// returns an error when there are some.
func writeReport(dir string, chapter []string) error {
	var nbs []*harness.Notebook
	for _, p := range chapter {
		nb, err := harness.Load(p)
		if err != nil {
			return err
		}
		nbs = append(nbs, nb)
	}
	secs := map[string]bookreport.SectionOutput{}
	for sec, so := range harness.Sections(nbs) {
		secs[sec] = bookreport.SectionOutput(so)
	}
	rep := bookreport.Evaluate(secs)
	rep.JudgeBySeeds()
	reportPath := filepath.Join(dir, "REPORT.md")
	if err := os.WriteFile(reportPath, []byte(rep.Markdown(nil)), 0o644); err != nil {
		return err
	}
	fmt.Printf("report: %s written\n", reportPath)
	failures := rep.Failures()
	for _, f := range failures {
		fmt.Println("  report: " + f)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%s: %d book lines fail a class 1 rule or are missing", reportPath, len(failures))
	}
	return nil
}

// storedKeys says whether the default result store (the kernels' too: they inherit this environment) holds a key;
// nil (nothing known to be stored) where it cannot be opened.
func storedKeys() func(key string) bool {
	s, err := store.Default()
	if err != nil {
		return nil
	}
	return harness.StoredIn(s)
}
