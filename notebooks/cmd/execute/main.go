// Command execute runs the chapter's notebooks through Jupyter and the GoNB kernel and writes each executed
// notebook over the committed one (outputs exactly as executed), printing per-notebook wall time; then it
// regenerates notebooks/REPORT.md, the book-vs-run report.
//
//	go run ./notebooks/cmd/execute               # every notebooks/*.ipynb
//	go run ./notebooks/cmd/execute 12.1 12.4     # by section or file name
//	go run ./notebooks/cmd/execute path/x.ipynb  # any notebook file (the report is not touched)
//	go run ./notebooks/cmd/execute -report       # only rewrite the report from the committed notebooks
//
// It exits non-zero if a notebook could not be executed or shows a failure (error output, Go panic, exit status).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/notebooks"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./notebooks/cmd/execute [section|name|path.ipynb ...]")
		flag.PrintDefaults()
	}
	reportOnly := flag.Bool("report", false, "execute nothing: rewrite notebooks/REPORT.md from the committed notebooks")
	flag.Parse()
	if *reportOnly && flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "execute: -report takes no notebooks")
		os.Exit(2)
	}
	if err := run(flag.Args(), *reportOnly); err != nil {
		fmt.Fprintln(os.Stderr, "execute:", err)
		os.Exit(1)
	}
}

func run(args []string, reportOnly bool) error {
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
		res, err := r.Check(context.Background(), p, tmp, san)
		if err != nil {
			fmt.Printf("%s: not written: %v\n", filepath.Base(p), err)
			failed++
			continue
		}
		if err := copyFile(res.File, p); err != nil {
			return err
		}
		if filepath.Dir(mustAbs(p)) == dir {
			touchedChapter = true
		}
		state := "ok"
		switch {
		case len(res.Failures) > 0:
			state = fmt.Sprintf("%d FAILURES", len(res.Failures))
			failed++
		case len(res.Diffs) > 0:
			state = fmt.Sprintf("outputs changed in %d cells (now written)", len(res.Diffs))
		}
		fmt.Printf("%-45s %7.1fs  %s\n", filepath.Base(p), res.Wall.Seconds(), state)
		for _, f := range res.Failures {
			fmt.Println("  " + f)
		}
	}
	fmt.Printf("total %.1fs\n", time.Since(total).Seconds())

	if touchedChapter {
		if err := writeReport(dir, chapter); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d notebooks failed", failed, len(paths))
	}
	return nil
}

func mustAbs(p string) string {
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

// writeReport evaluates the chapter's notebooks as committed and writes dir/REPORT.md, listing the failures.
func writeReport(dir string, chapter []string) error {
	var nbs []*notebooks.Notebook
	for _, p := range chapter {
		nb, err := notebooks.Load(p)
		if err != nil {
			return err
		}
		nbs = append(nbs, nb)
	}
	rep := notebooks.Evaluate(notebooks.Sections(nbs))
	reportPath := filepath.Join(dir, "REPORT.md")
	if err := os.WriteFile(reportPath, []byte(rep.Markdown(nil)), 0o644); err != nil {
		return err
	}
	fmt.Printf("report: %s written\n", reportPath)
	for _, f := range rep.Failures() {
		fmt.Println("  report: " + f)
	}
	return nil
}
