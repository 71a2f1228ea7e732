package ch12

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/store"
)

func TestStatus(t *testing.T) {
	const why = "the code of main.X"
	var (
		loaded    = func(key string) store.Event { return store.Event{Kind: store.Loaded, Key: key} }
		computing = func(key string) store.Event { return store.Event{Kind: store.Computing, Key: key} }
		computed  = func(key string, took time.Duration) store.Event {
			return store.Event{Kind: store.Computed, Key: key, Took: took}
		}
		verified = func(key string, took time.Duration) store.Event {
			return store.Event{Kind: store.Verified, Key: key, Took: took}
		}
		verifying = store.Event{Kind: store.Verifying, Key: "run-1", Why: why}
		progress  = func(name string, step, steps int) store.Event {
			return store.Event{Kind: store.Progressed, Key: "run-1", Name: name, Step: step, Steps: steps,
				Elapsed: time.Duration(step) * time.Second, Remaining: time.Duration(steps-step) * time.Second}
		}
	)
	tests := []struct {
		name   string
		events []store.Event
		want   string // the block after the last event
	}{
		{"one load", []store.Event{loaded("rl_base-1")}, "cache: loaded rl_base-1"},
		{"repeated loads count once", []store.Event{loaded("a"), loaded("b"), loaded("a"), loaded("c"), loaded("d")},
			"cache: loaded 4 stored results (a, b, c and 1 more)"},
		{"a computation leaves its summary",
			[]store.Event{computing("run-1"), progress("train_rl", 1, 40), progress("train_rl", 40, 40),
				computed("run-1", 9400*time.Millisecond)},
			"cache: computed run-1 in 9s"},
		{"the live line is the latest", []store.Event{loaded("rl_base-1"), computing("run-1"), progress("train_rl", 3, 40)},
			"cache: loaded rl_base-1\nprogress: train_rl step 3/40 | elapsed 3s | remaining 37s | "},
		{"waiting is live", []store.Event{loaded("rl_base-1"), {Kind: store.Waiting, Key: "run-1"}},
			"cache: loaded rl_base-1\ncache: waiting for run-1 (another process is computing it)"},
		{"warnings stay",
			[]store.Event{computing("r"), {Kind: store.Interrupted, Key: "r.partial", Step: 2}, progress("r", 3, 9)},
			"cache: interrupt: progress after step 2 saved; stopping at the end of the current step or within 3s\n" +
				"progress: r step 3/9 | elapsed 3s | remaining 6s | "},
		{"a resumed run says where from",
			[]store.Event{{Kind: store.Resuming, Key: "r.partial", Step: 4}, computed("r", 2*time.Second)},
			"cache: computed r in 2s\ncache: resuming r.partial after step 4"},
		{"verified, then loaded",
			[]store.Event{loaded("rl_base-1"), verifying, verified("run-1", 420*time.Millisecond), loaded("run-1")},
			"cache: loaded 2 stored results (rl_base-1, run-1)\ncache: verified run-1 by its first step again in 400ms"},
		{"verified at every serve",
			[]store.Event{verified("run-1", 1240*time.Millisecond), verified("run-1", 960*time.Millisecond),
				verified("run-2", 460*time.Millisecond)},
			"cache: verified 3 serves of 2 by their first step again in 2.7s (run-1, run-2)"},
		{"computed otherwise",
			[]store.Event{verifying, {Kind: store.Otherwise, Key: "run-1", Why: why, Differs: "in reward"},
				computing("run-1"), computed("run-1", 9*time.Second)},
			"cache: computed run-1 in 9s\ncache: run-1: the stored run was computed otherwise (its first step differs: " +
				"in reward; the key holds the code of main.X, not what it reads at run time): computing it again"},
		{"not stored", []store.Event{{Kind: store.Computing, Key: "k", Reads: []string{"$HOME"}},
			{Kind: store.Computed, Key: "k", Took: time.Second, Reads: []string{"$HOME"}}},
			"cache: computed k in 1s, not stored (its code reads $HOME)"},
		{"a failed save is a note",
			[]store.Event{{Kind: store.Computed, Key: "k", Took: time.Second, Err: errors.New("disk full")}},
			"cache: computed k in 1s but could not store it: disk full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var last string
			draws := 0
			s := NewStatus(func(text string) { last, draws = text, draws+1 })
			for _, e := range tt.events {
				s.Observe(e)
			}
			if last != tt.want || draws != len(tt.events) {
				t.Errorf("block after %d draws:\n%s\nwant after %d draws:\n%s", draws, last, len(tt.events), tt.want)
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
