// Command execute runs the chapter's notebooks through Jupyter and the GoNB kernel and writes each executed
// notebook over the committed one (outputs exactly as executed), printing per-notebook wall time; then it
// regenerates notebooks/REPORT.md, the book-vs-run report. A notebook that could not be executed to the end or
// shows a failure is not written: the committed one stays.
//
//	go run ./notebooks/cmd/execute               # every notebooks/*.ipynb
//	go run ./notebooks/cmd/execute 12.1 12.4     # by section or file name
//	go run ./notebooks/cmd/execute path/x.ipynb  # any notebook file (the report is not touched)
//	go run ./notebooks/cmd/execute -report       # only rewrite the report from the committed notebooks
//
// It exits non-zero if a notebook could not be executed or shows a failure (error output, Go panic, exit status),
// or if the report fails (a class 1 or class 3 rule, or a missing line). SIGINT or SIGTERM stops it: the running
// kernel is shut down and nothing more is written.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentrl-go/agentrl/notebooks"
	"github.com/agentrl-go/agentrl/notebooks/bookreport"
)

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: go run ./notebooks/cmd/execute [flags] [section|name|path.ipynb ...]

Executes the chapter's notebooks (all of notebooks/*.ipynb, or those named by section such as 12.4, by name or by
path) headless through Jupyter and the GoNB kernel, writes each executed notebook over its file (outputs exactly as
executed) and prints its wall time, then regenerates notebooks/REPORT.md, the book-vs-run report (not for a
notebook given by path). A notebook whose execution shows a failure is not written; the command exits non-zero
then, and when the report fails a class 1 or class 3 rule or misses a line. Ctrl-C shuts the running kernel down
and writes nothing more.

Flags:
`)
		flag.PrintDefaults()
	}
	reportOnly := flag.Bool("report", false, "execute nothing: rewrite notebooks/REPORT.md from the committed notebooks")
	flag.Parse()
	if *reportOnly && flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "execute: -report takes no notebooks")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, flag.Args(), *reportOnly)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "execute:", err)
		os.Exit(1)
	}
}

// run executes the notebooks named by args (all of the chapter's when there are none) and rewrites the report
// when one of the chapter's notebooks was written; with reportOnly it only rewrites the report. It returns the
// joined errors of the notebooks that failed and of the report, or the first error that stops it.
func run(ctx context.Context, args []string, reportOnly bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "notebooks")
	chapter, err := notebooks.Chapter(dir)
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
	failed, touchedChapter, err := executeAll(ctx, root, paths, chapter)
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
// as is; the others are sections or names, which select from chapter (see [notebooks.Select]) after those files.
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
		sel, err := notebooks.Select(chapter, strings.Join(names, ","))
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

// executeAll executes the notebooks at paths in order with one runner (see executeOne), then prints the total
// wall time. It returns how many were not written, and whether one of chapter's was (touched). Its error stops it
// at once: the runner or its temporary folder could not be made, ctx was cancelled, or a notebook was not saved.
func executeAll(ctx context.Context, root string, paths, chapter []string) (failed int, touched bool, err error) {
	r, err := notebooks.NewRunner()
	if err != nil {
		return 0, false, err
	}
	r.Log = os.Stderr
	tmp, err := os.MkdirTemp("", "nbexecute-")
	if err != nil {
		return 0, false, err
	}
	defer os.RemoveAll(tmp)
	san := notebooks.NewSanitizer(root)

	total := time.Now()
	for _, p := range paths {
		written, err := executeOne(ctx, r, san, tmp, p)
		if err != nil {
			return failed, touched, err
		}
		if !written {
			failed++
		} else if slices.Contains(chapter, absPath(p)) {
			touched = true // a scratch notebook beside the chapter's leaves the report alone
		}
	}
	fmt.Printf("total %.1fs\n", time.Since(total).Seconds())
	return failed, touched, nil
}

// executeOne executes the notebook at p with r into the folder tmp, printing its name first, and saves it over p
// unless it shows failures (see save). A notebook that could not be executed to the end is not written: its error
// and the failures of the cells that ran are printed. executeOne reports whether it wrote p; its error is a
// cancelled ctx or a failure to write p.
func executeOne(ctx context.Context, r *notebooks.Runner, san *notebooks.Sanitizer, tmp, p string) (bool, error) {
	fmt.Printf("== %s\n", p)
	res, err := r.Check(ctx, p, tmp, san)
	if ctx.Err() != nil {
		return false, fmt.Errorf("stopped (%v) while executing %s: nothing more written", context.Cause(ctx), p)
	}
	if err != nil {
		fmt.Printf("%s: not written: %v\n", filepath.Base(p), err)
		if res != nil {
			for _, f := range res.Failures { // of the cells that ran before it stopped
				fmt.Println("  " + f)
			}
		}
		return false, nil
	}
	return save(res, p)
}

// save writes the executed notebook of res over dst unless it shows failures, and prints one line about it (and
// the failures). It reports whether it wrote dst.
func save(res *notebooks.Result, dst string) (bool, error) {
	state := "ok"
	switch {
	case len(res.Failures) > 0:
		state = fmt.Sprintf("%d FAILURES (not written)", len(res.Failures))
	case len(res.Diffs) > 0:
		state = fmt.Sprintf("outputs changed in %d cells (now written)", len(res.Diffs))
	}
	fmt.Printf("%-45s %7.1fs  %s\n", filepath.Base(dst), res.Wall.Seconds(), state)
	for _, f := range res.Failures {
		fmt.Println("  " + f)
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
	var nbs []*notebooks.Notebook
	for _, p := range chapter {
		nb, err := notebooks.Load(p)
		if err != nil {
			return err
		}
		nbs = append(nbs, nb)
	}
	secs := map[string]bookreport.SectionOutput{}
	for sec, so := range notebooks.Sections(nbs) {
		secs[sec] = bookreport.SectionOutput(so)
	}
	rep := bookreport.Evaluate(secs)
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
		return fmt.Errorf("%s: %d book lines fail a class 1 or class 3 rule or are missing", reportPath, len(failures))
	}
	return nil
}
