package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/notebooks/harness"
)

func TestSave(t *testing.T) {
	for _, tc := range []struct {
		name    string
		res     harness.Result
		written bool
	}{
		{"clean", harness.Result{}, true},
		{"changed", harness.Result{Diffs: []string{"code cell 1: output differs"}}, true},
		{"failed", harness.Result{Failures: []string{"code cell 1: Go failure on stderr: panic: boom"}}, false},
	} {
		dir := t.TempDir()
		dst, executed := filepath.Join(dir, "12.1-x.ipynb"), filepath.Join(dir, "executed.ipynb")
		if err := os.WriteFile(dst, []byte("committed"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(executed, []byte("executed"), 0o644); err != nil {
			t.Fatal(err)
		}
		tc.res.File = executed
		written, err := save(io.Discard, &tc.res, dst)
		data, _ := os.ReadFile(dst)
		if err != nil || written != tc.written || (string(data) == "executed") != tc.written {
			t.Errorf("%s: save = %v, %v; %s holds %q", tc.name, written, err, dst, data)
		}
	}
}

func TestWriteReportFails(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "12.1-x.ipynb") // a written notebook that prints none of the book's lines
	if err := os.WriteFile(nb, []byte(`{"cells": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(dir, []string{nb}); err == nil {
		t.Error("writeReport = nil for a report with missing lines")
	}
	if _, err := os.Stat(filepath.Join(dir, "REPORT.md")); err != nil {
		t.Errorf("the report must be written all the same: %v", err)
	}
}

// TestExecuteParallel runs executeParallel on fake notebooks: they start in order, at most jobs at once; one whose
// execution fails, or shows a failure, stops no other and is not written; the others are written, each as it ends.
func TestExecuteParallel(t *testing.T) {
	for _, jobs := range []int{1, 2, 3} {
		dir := t.TempDir()
		names := []string{"12.1-a", "12.2-fails", "12.3-c", "12.4-error", "12.5-e", "12.6-f"}
		var paths []string
		for _, n := range names {
			p := filepath.Join(dir, n+".ipynb")
			if err := os.WriteFile(p, []byte("committed"), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		var mu sync.Mutex
		var order []int
		running, most := 0, 0
		check := func(ctx context.Context, i int, log io.Writer) (*harness.Result, error) {
			mu.Lock()
			order = append(order, i)
			running++
			most = max(most, running)
			mu.Unlock()
			defer func() { mu.Lock(); running--; mu.Unlock() }()
			fmt.Fprintf(log, "nbexec: cell 1/1 [x] 0.0s\n")
			time.Sleep(time.Duration(len(paths)-i) * 5 * time.Millisecond) // the later end sooner
			file := filepath.Join(dir, fmt.Sprintf("executed-%d.ipynb", i))
			if err := os.WriteFile(file, []byte(fmt.Sprintf("executed %d", i)), 0o644); err != nil {
				t.Error(err)
			}
			res := &harness.Result{Path: paths[i], File: file, Wall: time.Second}
			switch {
			case strings.Contains(names[i], "fails"):
				res.Failures = []string{"code cell 1: Go failure on stderr: panic: boom"}
			case strings.Contains(names[i], "error"):
				return res, errors.New("kernel died")
			}
			return res, nil
		}
		var out, log, progress bytes.Buffer
		prog := harness.NewProgress(&progress, paths, jobs, nil)
		outcomes, err := executeParallel(context.Background(), paths, jobs, check, prog, &out, &log)
		prog.Close()
		if err != nil {
			t.Fatalf("jobs %d: executeParallel: %v", jobs, err)
		}
		if most > jobs || (jobs > 1 && most < 2) {
			t.Errorf("jobs %d: %d at once", jobs, most)
		}
		// One at once: in order. Side by side, each is begun in order (TestForEach) and checked a moment later.
		if jobs == 1 && !slices.Equal(order, []int{0, 1, 2, 3, 4, 5}) {
			t.Errorf("jobs 1: executed in the order %v", order)
		}
		if slices.Sort(order); !slices.Equal(order, []int{0, 1, 2, 3, 4, 5}) {
			t.Errorf("jobs %d: executed %v, want all", jobs, order)
		}
		for i, p := range paths {
			data, _ := os.ReadFile(p)
			want := !strings.Contains(names[i], "fails") && !strings.Contains(names[i], "error")
			if outcomes[i].written != want || (string(data) == fmt.Sprintf("executed %d", i)) != want {
				t.Errorf("jobs %d: %s: written %v, holds %q; want written %v", jobs, names[i], outcomes[i].written, data, want)
			}
			if !strings.Contains(out.String(), "== "+p+"\n") {
				t.Errorf("jobs %d: no lines about %s in\n%s", jobs, p, out.String())
			}
		}
		if !strings.Contains(out.String(), "12.4-error.ipynb: not written: kernel died") ||
			!strings.Contains(out.String(), "1 FAILURES (not written)") {
			t.Errorf("jobs %d: output\n%s", jobs, out.String())
		}
		if !strings.Contains(log.String(), "12.3: nbexec: cell 1/1") {
			t.Errorf("jobs %d: log\n%s", jobs, log.String())
		}
		if last := lastLine(progress.String()); !strings.HasPrefix(last, "chapter: 6/6 done (2 failed) | elapsed") {
			t.Errorf("jobs %d: last progress line %q", jobs, last)
		}
	}
}

// TestExecuteParallelStopped: a cancelled run starts no more notebooks and writes none of those it stopped.
func TestExecuteParallelStopped(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, n := range []string{"12.1-a", "12.2-b", "12.3-c"} {
		p := filepath.Join(dir, n+".ipynb")
		os.WriteFile(p, []byte("committed"), 0o644)
		paths = append(paths, p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	check := func(ctx context.Context, i int, log io.Writer) (*harness.Result, error) {
		calls.Add(1)
		file := filepath.Join(dir, fmt.Sprintf("executed-%d.ipynb", i))
		os.WriteFile(file, []byte("executed"), 0o644)
		if i == 1 {
			cancel()
		}
		<-ctx.Done() // the kernel is stopped
		return &harness.Result{File: file}, ctx.Err()
	}
	prog := harness.NewProgress(io.Discard, paths, 2, nil)
	_, err := executeParallel(ctx, paths, 2, check, prog, io.Discard, io.Discard)
	prog.Close()
	if err == nil || !strings.Contains(err.Error(), "nothing more written") || !strings.Contains(err.Error(), "12.1-a.ipynb") {
		t.Errorf("executeParallel = %v, want it stopped", err)
	}
	if calls.Load() != 2 {
		t.Errorf("%d notebooks started, want 2", calls.Load())
	}
	for _, p := range paths {
		if data, _ := os.ReadFile(p); string(data) != "committed" {
			t.Errorf("%s holds %q", p, data)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
