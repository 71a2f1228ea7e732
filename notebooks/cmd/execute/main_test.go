package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentrl-go/agentrl/notebooks"
)

func TestSave(t *testing.T) {
	for _, tc := range []struct {
		name    string
		res     notebooks.Result
		written bool
	}{
		{"clean", notebooks.Result{}, true},
		{"changed", notebooks.Result{Diffs: []string{"code cell 1: output differs"}}, true},
		{"failed", notebooks.Result{Failures: []string{"code cell 1: Go failure on stderr: panic: boom"}}, false},
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
		written, err := save(&tc.res, dst)
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
