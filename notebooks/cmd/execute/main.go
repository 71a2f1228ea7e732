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

func run(ctx context.Context, args []string, reportOnly bool) error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return fmt.Errorf("run it from inside the repository (go env GOMOD found no module)")
	}
	root := filepath.Dir(gomod)
	dir := filepath.Join(root, "notebooks")
	chapter, err := notebooks.Chapter(dir)
	if err != nil {
		return err
	}

	if reportOnly {
		return writeReport(dir, chapter)
	}

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
			return err
		}
		paths = append(paths, sel...)
	}
	if len(paths) == 0 {
		return fmt.Errorf("no notebooks in %s", dir)
	}

	r, err := notebooks.NewRunner()
	if err != nil {
		return err
	}
	r.Log = os.Stderr
	tmp, err := os.MkdirTemp("", "nbexecute-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	san := notebooks.NewSanitizer(root)

	failed, touchedChapter := 0, false
	total := time.Now()
	for _, p := range paths {
		fmt.Printf("== %s\n", p)
		res, err := r.Check(ctx, p, tmp, san)
		if ctx.Err() != nil {
			return fmt.Errorf("stopped (%v) while executing %s: nothing more written", context.Cause(ctx), p)
		}
		if err != nil {
			fmt.Printf("%s: not written: %v\n", filepath.Base(p), err)
			if res != nil {
				for _, f := range res.Failures { // of the cells that ran before it stopped
					fmt.Println("  " + f)
				}
			}
			failed++
			continue
		}
		written, err := save(res, p)
		if err != nil {
			return err
		}
		if !written {
			failed++
		} else if slices.Contains(chapter, absPath(p)) {
			touchedChapter = true // a scratch notebook beside the chapter's leaves the report alone
		}
	}
	fmt.Printf("total %.1fs\n", time.Since(total).Seconds())

	var errs []error
	if failed > 0 {
		errs = append(errs, fmt.Errorf("%d of %d notebooks failed", failed, len(paths)))
	}
	if touchedChapter {
		errs = append(errs, writeReport(dir, chapter))
	}
	return errors.Join(errs...)
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
