package main

import (
	"math"
	"slices"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
)

func TestParseSeeds(t *testing.T) {
	tests := []struct {
		list string
		want []uint64
		ok   bool
	}{
		{"0,1,2", []uint64{0, 1, 2}, true},
		{" 7 , 8", []uint64{7, 8}, true},
		{"5", []uint64{5}, true},
		{"", nil, false},
		{"1,,2", nil, false},
		{"-1", nil, false},
		{"a", nil, false},
	}
	for _, tc := range tests {
		got, err := parseSeeds(tc.list)
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("parseSeeds(%q) = %v, %v; want %v, ok %v", tc.list, got, err, tc.want, tc.ok)
		}
	}
}

// checkByID returns the check with the given report ID.
func checkByID(t *testing.T, id string) check {
	t.Helper()
	for _, c := range checks {
		if c.id == id {
			return c
		}
	}
	t.Fatalf("no check %s", id)
	return check{}
}

// TestContextChecks holds the 12.4 checks to every part of their rules in reproduction-targets.md, starting from
// the book's own values (which satisfy them) and breaking one part at a time.
func TestContextChecks(t *testing.T) {
	book := func() outcome {
		var o outcome
		o.fullCtx = agentrl.Stats{PassRate: 0.731, Reads: 1.01, Tests: 0.82, Turns: 3.87}
		o.fullMasked = agentrl.Stats{PassRate: 0.725, Reads: 1.27, Tests: 0.05, Turns: 3.39}
		o.maskedFull = agentrl.Stats{PassRate: 0.500, Reads: 1.04, Tests: 0.07, Turns: 5.29}
		o.maskedOwn = agentrl.Stats{PassRate: 0.794, Reads: 1.04, Tests: 0.02, Turns: 3.38}
		o.singleTurn = agentrl.Stats{PassRate: 0.000, Reads: 0.00}
		return o
	}
	tests := []struct {
		id    string
		edit  func(*outcome)
		holds bool
	}{
		{"C19", func(*outcome) {}, true},
		{"C19", func(o *outcome) { o.fullMasked.Tests = 0.5 }, false},
		{"C19", func(o *outcome) { o.fullMasked.PassRate = 0.6 }, false},
		{"C19", func(o *outcome) { o.fullMasked.Turns = 3.9 }, false},
		{"C21", func(*outcome) {}, true},
		{"C21", func(o *outcome) { o.maskedFull.PassRate = 0.75 }, false},
		{"C21", func(o *outcome) { o.maskedFull.Turns = 4.0 }, false},
		// Masking costs the full policy as much as the full history costs the masked one: no asymmetry.
		{"C21", func(o *outcome) { o.fullMasked.PassRate = 0.45 }, false},
		{"C28", func(*outcome) {}, true},
		{"C28", func(o *outcome) { o.singleTurn.PassRate = 0.1 }, false},
		{"C28", func(o *outcome) { o.singleTurn.Reads = 0.2 }, false},
	}
	for i, tc := range tests {
		o := book()
		tc.edit(&o)
		if got := checkByID(t, tc.id).holds(o); got != tc.holds {
			t.Errorf("case %d: %s holds = %v, want %v", i, tc.id, got, tc.holds)
		}
	}
}

// TestPenaltyWindows holds C32's check to each part of its rule, from the book's windows and C14's turns.
func TestPenaltyWindows(t *testing.T) {
	tests := []struct {
		name    string
		windows [4]float64
		turns   float64 // C14's held-out turns
		holds   bool
	}{
		{"book", [4]float64{1.82, 1.02, 1.01, 1.01}, 1.00, true},
		{"first window at its upper edge", [4]float64{2.6, 1.02, 1.01, 1.01}, 1.00, true},
		{"first window too short", [4]float64{1.15, 1.02, 1.01, 1.01}, 1.00, false},
		{"first window too long", [4]float64{2.7, 1.02, 1.01, 1.01}, 1.00, false},
		{"a later window at 1.10", [4]float64{1.82, 1.02, 1.10, 1.01}, 1.00, true},
		{"a later window above 1.10", [4]float64{1.82, 1.02, 1.16, 1.02}, 1.00, false},
		{"last window away from C14", [4]float64{1.82, 1.02, 1.01, 1.01}, 1.07, false},
	}
	for _, tc := range tests {
		var o outcome
		o.penaltyWindows, o.penalty.Turns = tc.windows, tc.turns
		if got := checkByID(t, "C32").holds(o); got != tc.holds {
			t.Errorf("%s: C32 holds = %v, want %v", tc.name, got, tc.holds)
		}
	}
}

// TestMalformedPerTurn checks that each window pools its calls, as 12.5 prints them: a step of many turns weighs
// more than one of few.
func TestMalformedPerTurn(t *testing.T) {
	run := &agentrl.Run{}
	for step := range 40 {
		// Step 0: one episode of 10 turns with 5 malformed calls; later steps: one of 2 turns, none malformed.
		info := agentrl.Info{NTurns: 2}
		if step == 0 {
			info = agentrl.Info{NTurns: 10, NInvalid: 5}
		}
		run.History = append(run.History, agentrl.StepStats{Step: step, Stats: agentrl.Stats{Episodes: 1}})
		run.Log = append(run.Log, info)
	}
	start, end, err := malformedPerTurn(run)
	if err != nil {
		t.Fatal(err)
	}
	if want := 5.0 / 18; math.Abs(start-want) > 1e-12 || end != 0 {
		t.Errorf("malformedPerTurn = %v, %v; want %v (5 of 18 turns; the mean of the steps' rates is 0.1), 0", start, end, want)
	}
	run.Log = run.Log[:39]
	if _, _, err := malformedPerTurn(run); err == nil {
		t.Error("a log one episode short of the history: no error")
	}
}

// history builds a 40-step training history from per-step statistics.
func history(f func(step int) agentrl.Stats) []agentrl.StepStats {
	h := make([]agentrl.StepStats, 40)
	for i := range h {
		h[i] = agentrl.StepStats{Step: i, Stats: f(i)}
	}
	return h
}

// ramp goes linearly from a at step from to b at step to, flat outside.
func ramp(step, from, to int, a, b float64) float64 {
	switch {
	case step <= from:
		return a
	case step >= to:
		return b
	}
	return a + (b-a)*float64(step-from)/float64(to-from)
}

func TestFigure122Checks(t *testing.T) {
	// The book's figure, as the targets describe it.
	book := func() outcome {
		var o outcome
		o.fig.def = history(func(s int) agentrl.Stats {
			r := ramp(s, 0, 12, 0.1, 1.5)
			if s > 12 {
				r = ramp(s, 12, 20, 1.5, 1.0)
			}
			return agentrl.Stats{Reads: r, Tests: ramp(s, 0, 15, 0.4, 0.9), PassRate: ramp(s, 0, 30, 0.17, 0.7)}
		})
		o.fig.cheap = history(func(s int) agentrl.Stats {
			t := ramp(s, 0, 15, 0.4, 0.8)
			if s > 22 {
				t = ramp(s, 22, 28, 0.8, 0.0)
			}
			return agentrl.Stats{Reads: ramp(s, 5, 25, 0.1, 1.0), Tests: t}
		})
		o.fig.dear = history(func(s int) agentrl.Stats {
			return agentrl.Stats{Turns: ramp(s, 0, 8, 3.6, 1.0), PassRate: ramp(s, 0, 8, 0.17, 0.0)}
		})
		o.fig.short = history(func(s int) agentrl.Stats {
			return agentrl.Stats{Reads: ramp(s, 0, 6, 0.1, 0.0), PassRate: 0.2}
		})
		return o
	}
	byID := map[string]check{}
	for _, c := range checks {
		byID[c.id] = c
	}
	for _, tc := range []struct {
		name  string
		id    string
		edit  func(*outcome)
		holds bool
	}{
		{"book F2a", "F2a", func(*outcome) {}, true},
		{"book F2b", "F2b", func(*outcome) {}, true},
		{"book F2c", "F2c", func(*outcome) {}, true},
		{"book F2d", "F2d", func(*outcome) {}, true},
		{"turns fall late", "F2a", func(o *outcome) {
			o.fig.dear = history(func(s int) agentrl.Stats { return agentrl.Stats{Turns: ramp(s, 0, 25, 3.6, 1.0)} })
		}, false},
		{"pass rises first", "F2a", func(o *outcome) {
			o.fig.dear = history(func(s int) agentrl.Stats {
				return agentrl.Stats{Turns: ramp(s, 0, 12, 3.6, 1.0), PassRate: ramp(s, 0, 4, 0.17, 0.5)}
			})
		}, false},
		{"the guesser passes 0.35", "F2b", func(o *outcome) {
			o.fig.short = history(func(s int) agentrl.Stats { return agentrl.Stats{PassRate: 0.35} })
		}, false},
		{"a reader is not held to it", "F2b", func(o *outcome) {
			o.fig.short = history(func(s int) agentrl.Stats { return agentrl.Stats{Reads: 1, PassRate: 0.6} })
			o.turns3.Reads = 0.9
		}, true},
		{"reads rise and stay (ours)", "F2c", func(o *outcome) {
			o.fig.def = history(func(s int) agentrl.Stats { return agentrl.Stats{Reads: ramp(s, 0, 9, 0.1, 1.0)} })
		}, false},
		{"cheap reads early (ours)", "F2d", func(o *outcome) {
			o.fig.cheap = history(func(s int) agentrl.Stats {
				return agentrl.Stats{Reads: ramp(s, 0, 12, 0.1, 1.0), Tests: o.fig.cheap[s].Tests}
			})
		}, false},
		{"tests never collapse", "F2d", func(o *outcome) {
			o.fig.cheap = history(func(s int) agentrl.Stats {
				return agentrl.Stats{Reads: o.fig.cheap[s].Reads, Tests: ramp(s, 0, 15, 0.4, 0.8)}
			})
		}, false},
	} {
		o := book()
		tc.edit(&o)
		if got := byID[tc.id].holds(o); got != tc.holds {
			t.Errorf("%s: %s holds = %v, want %v", tc.name, tc.id, got, tc.holds)
		}
	}
}

// TestThreeTurnRegimes holds C15's check to its two regimes, starting from the book's row (a blind guesser) and
// breaking one part of the guesser's rule at a time; a reader is held only to its own rule.
func TestThreeTurnRegimes(t *testing.T) {
	book := func() outcome {
		var o outcome
		o.turns3 = agentrl.Stats{PassRate: 0.200, Reads: 0.00, Tests: 0.00, Edits: 0.99, Turns: 2.03}
		o.turns3Reward, o.blindCeiling = 0.181, 0.200
		o.fig.short = history(func(int) agentrl.Stats { return agentrl.Stats{PassRate: 0.18} })
		return o
	}
	tests := []struct {
		name  string
		edit  func(*outcome)
		holds bool
	}{
		{"book", func(*outcome) {}, true},
		{"turns above 2.2", func(o *outcome) { o.turns3.Turns = 2.59 }, false},
		{"batch reward above 0.23", func(o *outcome) { o.turns3Reward = 0.239 }, false},
		{"held-out pass off 0.20", func(o *outcome) { o.turns3.PassRate = 0.25 }, false},
		{"reads without being a reader", func(o *outcome) { o.turns3.Reads = 0.2 }, false},
		{"training pass clearly above the blind ceiling", func(o *outcome) {
			o.fig.short = history(func(s int) agentrl.Stats { return agentrl.Stats{PassRate: ramp(s, 10, 30, 0.18, 0.30)} })
		}, false},
		{"a reader within its rule", func(o *outcome) { o.turns3 = agentrl.Stats{PassRate: 0.41, Reads: 0.95, Edits: 0.95, Turns: 2.9} }, true},
		{"a reader passing too much", func(o *outcome) { o.turns3 = agentrl.Stats{PassRate: 0.69, Reads: 0.92, Edits: 0.90, Turns: 2.95} }, false},
	}
	for _, tc := range tests {
		o := book()
		tc.edit(&o)
		if got := checkByID(t, "C15").holds(o); got != tc.holds {
			t.Errorf("%s: C15 holds = %v, want %v", tc.name, got, tc.holds)
		}
	}
}
