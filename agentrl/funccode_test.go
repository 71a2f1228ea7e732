package agentrl_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cell program that shows agentrl's KeepObs and ContextView verbatim (GoNB writes them, "agentrl."-qualified,
// into the cell program's file), and a context policy of its own.
const showsKeepObs = `package main

import "github.com/agentrl-go/agentrl/agentrl"

// ContextView is the chapter's context_view.
func ContextView(ids []int32, owner []agentrl.Owner, turn []int32, k, keepObs int) []int32 {
	if keepObs < 0 {
		return append([]int32(nil), ids...)
	}
	var view []int32
	for i, id := range ids {
		if !(owner[i] == agentrl.OwnerTool && int(turn[i]) < k-keepObs) {
			view = append(view, id)
		}
	}
	return view
}

// KeepObs, with another comment and layout than the library's.
func KeepObs(n int) agentrl.ContextPolicy {
	return func(ids []int32, owner []agentrl.Owner, turn []int32, k int) []int32 { return ContextView(ids, owner, turn, k, n) }
}

func lastOnly(ids []int32, owner []agentrl.Owner, turn []int32, k int) []int32 { return ContextView(ids, owner, turn, k, 1) }
`

// TestFuncCodeOfShownLibraryCode checks that a cell's verbatim copy of agentrl's code keys as the library's
// function does (""), and that an edit of the copy, or of what it reaches, or code of the cell's own, keys apart.
func TestFuncCodeOfShownLibraryCode(t *testing.T) {
	tests := []struct {
		name, old, new, at string
		library            bool
	}{
		{"the copy", "", "", "func KeepObs", true},
		{"the copy, reached through its literal", "", "", "return func(ids", true},
		{"an edit of the copy", "k, n) }", "k, n+1) }", "func KeepObs", false},
		{"an edit of what the copy reaches", "k-keepObs", "k-keepObs-1", "func KeepObs", false},
		{"another package's name", "agentrl.OwnerTool", "gomlxmodel.OwnerTool", "func KeepObs", false},
		{"the cell's own code", "", "", "func lastOnly", false},
	}
	for _, tt := range tests {
		src := showsKeepObs
		if tt.old != "" {
			if !strings.Contains(src, tt.old) {
				t.Fatalf("%s: %q not in the program", tt.name, tt.old)
			}
			src = strings.Replace(src, tt.old, tt.new, 1)
		}
		got := cellKey(t, src, []keyInput{{at: tt.at}})
		if (got == "") != tt.library {
			t.Errorf("%s: FuncCode = %q, want the library's (%v)", tt.name, got, tt.library)
		}
	}
}

// TestChapterCopiesKeyAsLibrary checks that the chapter's notebooks, as committed (the repository's
// testdata/cells), show the library's code for every function their shared runs are keyed by: the critic warm-up
// and the credit advantages (12.2), the context policy and its training step (12.4), the early-stop environments
// (12.5). Each keys as the library's own function (""), so cmd/seeds, which passes agentrl's, loads what the
// notebooks stored.
func TestChapterCopiesKeyAsLibrary(t *testing.T) {
	for _, tc := range []struct{ file, at string }{
		{"12.2.go", "func WarmCritic("},
		{"12.2.go", "return func(s agentrl.StepBatch) ([][]float32, error) {"},
		{"12.4.go", "return func(ids []int32, owner []agentrl.Owner, turn []int32, k int) []int32 {"},
		{"12.4.go", "func ContextStep("},
		{"12.5.go", "return func() (agentrl.Env, error) {"},
	} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "cells", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := cellKey(t, string(data), []keyInput{{at: tc.at}}); got != "" {
			t.Errorf("%s %q keys as the notebook's code (%s), not the library's", tc.file, tc.at, got)
		}
	}
}
