package main

import (
	"slices"
	"strings"
	"testing"
)

// bookRow is a step-0 row that prints the book's own numbers (and totals consistent with them).
func bookRow() step0Row {
	return step0Row{lines: map[string][]string{
		"12.1": {
			"template  predicted positions   82 | with gradient    0",
			"prompt    predicted positions   96 | with gradient    0",
			"policy    predicted positions  201 | with gradient  201",
			"tool      predicted positions  491 | with gradient    0",
			"16 episodes: 870 predicted positions, 201 in the action mask | prompt tokens of the two tasks: 6 and 6",
			"max_turns  6 | tokens per episode  38.0 (max 144) | policy share 0.30 | context overflow 0.00",
			"max_turns 12 | tokens per episode  45.3 (max 182) | policy share 0.30 | context overflow 0.00",
			"max_turns 24 | tokens per episode  49.3 (max 249) | policy share 0.31 | context overflow 0.01",
		},
		"12.5": {"error observation  episodes with an error 0.044 | their pass rate 0.143 | overall pass 0.131 | policy tokens per episode 12.3"},
		"12.7": {"step-0 batch: 11 of 64 episodes pass, 46 submit, 3 make a malformed call | turns 3.641, reads 0.047 per episode"},
	}}
}

func TestVerdict(t *testing.T) {
	inside, statuses, gate := bookRow().verdict()
	if inside != len(step0IDs) || !gate {
		t.Fatalf("the book's own lines: %d of %d inside, gate %v: %v", inside, len(step0IDs), gate, statuses)
	}
	row := bookRow()
	row.lines["12.1"][5] = "max_turns  6 | tokens per episode  29.0 (max 144) | policy share 0.30 | context overflow 0.00"
	row.lines["12.7"][0] = "step-0 batch: 20 of 64 episodes pass, 46 submit, 3 make a malformed call | turns 3.641, reads 0.047 per episode"
	inside, statuses, gate = row.verdict()
	if inside != len(step0IDs)-1 || gate || !strings.HasPrefix(statuses[4], "C5✗ (tokens 38 ± 8") {
		t.Errorf("29 tokens at 6 turns, 20 passing episodes: %d inside, gate %v, %v", inside, gate, statuses)
	}
}

func TestValues(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"max_turns  6 | tokens per episode  47.3 (max 109) | policy share 0.28 | context overflow 0.00", []string{"6", "47.3", "109", "0.28", "0.00"}},
		{"step-0 batch: 11 of 64 episodes pass, 46 submit | turns 3.641, reads -0.5 - x", []string{"11", "64", "46", "3.641", "-0.5"}},
	} {
		if got := values(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("values(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}
