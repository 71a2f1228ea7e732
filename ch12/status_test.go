package ch12

import (
	"fmt"
	"strings"
	"testing"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string // the block after the last write
		draws  int
	}{
		{"one load", []string{"cache: loaded rl_base-1\n"}, "cache: loaded rl_base-1", 1},
		{"repeated loads count once",
			[]string{"cache: loaded a\n", "cache: loaded b\ncache: loaded a\n", "cache: loaded c\n", "cache: loaded d\n"},
			"cache: loaded 4 stored results (a, b, c and 1 more)", 4},
		{"a computation leaves its summary",
			[]string{"cache: computing run-1 (an interrupt saves its progress for the next run)\n",
				"progress: train_rl step 1/40 | elapsed 1s\n", "progress: train_rl step 40/40 | elapsed 9s\n",
				"cache: computed run-1 in 9s\n"},
			"cache: computed run-1 in 9s", 4},
		{"the live line is the latest",
			[]string{"cache: loaded rl_base-1\n", "cache: computing run-1 (…)\n", "progress: train_rl step 3/40\n"},
			"cache: loaded rl_base-1\nprogress: train_rl step 3/40", 3},
		{"a line in pieces draws once whole",
			[]string{"cache: lo", "aded x", "\n"}, "cache: loaded x", 1},
		{"warnings stay",
			[]string{"cache: computing r (…)\n", "cache: interrupt: progress after step 2 saved; stopping\n",
				"progress: r step 3/9\n"},
			"cache: interrupt: progress after step 2 saved; stopping\nprogress: r step 3/9", 3},
		{"verified, then loaded",
			[]string{"cache: loaded rl_base-1\n", "cache: verifying run-1 (its first step again: the code of main.X)\n",
				"cache: verified run-1 in 0.4s\n", "cache: loaded run-1\n"},
			"cache: loaded 2 stored results (rl_base-1, run-1)\ncache: verified run-1 by its first step again in 400ms", 4},
		{"verified at every serve",
			[]string{"cache: verified run-1 in 1.2s\n", "cache: verified run-1 in 1s\n", "cache: verified run-2 in 0.5s\n"},
			"cache: verified 3 serves of 2 by their first step again in 2.7s (run-1, run-2)", 3},
		{"computed otherwise",
			[]string{"cache: verifying run-1 (…)\n", "cache: run-1: the stored run was computed otherwise (…): computing it again\n",
				"cache: computing run-1 (…)\n", "cache: computed run-1 in 9s\n"},
			"cache: computed run-1 in 9s\ncache: run-1: the stored run was computed otherwise (…): computing it again", 4},
		{"a failed save is a note", []string{"cache: computed k in 1s but could not store it: disk full\n"},
			"cache: computed k in 1s but could not store it: disk full", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var last string
			draws := 0
			s := NewStatus(func(text string) { last, draws = text, draws+1 })
			for _, w := range tt.writes {
				if n, err := fmt.Fprint(s, w); err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if last != tt.want || draws != tt.draws {
				t.Errorf("block after %d draws:\n%s\nwant after %d draws:\n%s", draws, last, tt.draws, tt.want)
			}
			if strings.Contains(last, "\n\n") {
				t.Errorf("block has an empty line: %q", last)
			}
		})
	}
}

func TestStatusDisplay(t *testing.T) {
	d := statusDisplay("id-1", "cache: loaded <a>")
	if d.DisplayID != "id-1" || d.Data["text/plain"] != "cache: loaded <a>" ||
		!strings.Contains(d.Data["text/html"].(string), "cache: loaded &lt;a&gt;") {
		t.Errorf("statusDisplay = %+v", d)
	}
}
