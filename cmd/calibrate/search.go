package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/internal/recipe"
	"github.com/agentrl-go/agentrl/notebooks/bookreport"
)

// step0IDs are the book lines that the base agent alone decides: 12.1's owner counts and budget sweep, and 12.5's
// error-observation line. The calibration gate (the seed-0 step-0 batch) is scored beside them.
var step0IDs = []string{"C1", "C2", "C3", "C4", "C5", "C6", "C7", "C24"}

// step0Row is what a candidate's base agent prints at step 0, in the notebooks' terms.
type step0Row struct {
	lines    map[string][]string // the notebooks' lines, by section
	invalid  float64             // malformed calls per turn over 20 tasks × 8 (C26's step-0 proxy, band [0.008, 0.035])
	submits  [3]float64          // submit rate at 6, 12 and 24 turns
	trainSec float64
}

// scoreStep0 makes (or loads) the candidate's base agent and prints its step-0 lines as the notebooks do.
func scoreStep0(l lab, c recipe.Candidate) (step0Row, error) {
	row := step0Row{lines: map[string][]string{}}
	start := time.Now()
	ch, base, err := l.candidate(c.Base, c.Tasks)
	if err != nil {
		return row, err
	}
	tok, train := ch.Tok, ch.Train
	row.trainSec = time.Since(start).Seconds()
	cfg := c.RL
	owners, err := ownerLines(base, tok, train, cfg)
	if err != nil {
		return row, err
	}
	row.lines["12.1"] = owners
	for i, maxTurns := range []int{6, 12, 24} {
		swept := cfg
		swept.MaxTurns = maxTurns
		trajs, err := agentrl.SampleGroups(base, nil, train, tok, swept, agentrl.NewRNG(1))
		if err != nil {
			return row, err
		}
		var policy, predicted, tokens, longest, overflow float64
		for _, t := range trajs {
			for _, m := range t.ActionMask {
				policy += float64(m)
			}
			predicted += float64(len(t.IDs) - 1)
			tokens += float64(len(t.IDs))
			longest = max(longest, float64(len(t.IDs)))
			if t.Info.Stop == agentrl.StopTruncated {
				overflow++
			}
		}
		n := float64(len(trajs))
		row.submits[i] = agentrl.BehaviorStats(trajs).SubmitRate
		row.lines["12.1"] = append(row.lines["12.1"], fmt.Sprintf(
			"max_turns %2d | tokens per episode %5.1f (max %.0f) | policy share %.2f | context overflow %.2f",
			maxTurns, tokens/n, longest, policy/predicted, overflow/n))
	}
	groups, err := agentrl.SampleGroups(base, nil, train, tok, cfg, agentrl.NewRNG(2))
	if err != nil {
		return row, err
	}
	var erred, erredReward, reward, policyTokens float64
	for _, t := range groups {
		if t.Info.NInvalid > 0 {
			erred++
			erredReward += t.Reward
		}
		reward += t.Reward
		for _, m := range t.ActionMask {
			policyTokens += float64(m)
		}
	}
	n := float64(len(groups))
	row.lines["12.5"] = []string{fmt.Sprintf("%-18s episodes with an error %.3f | their pass rate %.3f | overall pass %.3f | policy tokens per episode %.1f",
		"error observation", erred/n, erredReward/max(erred, 1), reward/n, policyTokens/n)}
	row.invalid = agentrl.BehaviorStats(groups).InvalidPerTurn
	step0, _, err := agentrl.SampleStep(base, nil, train, tok, cfg, agentrl.NewRNG(cfg.Seed))
	if err != nil {
		return row, err
	}
	s := agentrl.BehaviorStats(step0)
	var passed, submitted, malformed int
	for _, t := range step0 {
		if t.Info.Solved() {
			passed++
		}
		if t.Info.Submitted {
			submitted++
		}
		if t.Info.NInvalid > 0 {
			malformed++
		}
	}
	row.lines["12.7"] = []string{fmt.Sprintf("step-0 batch: %d of %d episodes pass, %d submit, %d make a malformed call | turns %.3f, reads %.3f per episode",
		passed, len(step0), submitted, malformed, s.Turns, s.Reads)}
	return row, nil
}

// ownerLines prints 12.1's owner counts of 8 episodes of each of the first two training tasks, and the totals
// line the report reads beside them.
func ownerLines(base *gomlxmodel.Model, tok *agentrl.Tokenizer, train []agentrl.Task, cfg agentrl.RLConfig) ([]string, error) {
	trajs, err := agentrl.SampleGroups(base, nil, train[:2], tok, cfg, agentrl.NewRNG(0))
	if err != nil {
		return nil, err
	}
	batch := agentrl.Collate(trajs, tok.PadID)
	advantages := make([]float32, batch.B)
	for i := range advantages {
		advantages[i] = 1
	}
	grad, err := base.LogitGradAbsSum(batch.IDs, batch.B, batch.T, advantages, batch.ActionMask)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, owner := range agentrl.Owners() {
		predicted, touched := 0, 0
		for j, o := range batch.Owner {
			if o == int8(owner) {
				predicted++
				if grad[j] > 0 {
					touched++
				}
			}
		}
		lines = append(lines, fmt.Sprintf("%-9s predicted positions %4d | with gradient %4d", owner, predicted, touched))
	}
	positions, actions := 0, 0
	for _, t := range trajs {
		positions += len(t.IDs) - 1
		for _, m := range t.ActionMask {
			actions += int(m)
		}
	}
	return append(lines, fmt.Sprintf("16 episodes: %d predicted positions, %d in the action mask | prompt tokens of the two tasks: %d and %d",
		positions, actions, len(tok.Encode(train[0].Issue)), len(tok.Encode(train[1].Issue)))), nil
}

// verdict scores a row with the report's own rules: the status of each step-0 line, and the calibration gate.
func (row step0Row) verdict() (inside int, statuses []string, gate bool) {
	sections := map[string]bookreport.SectionOutput{}
	for sec, lines := range row.lines {
		sections[sec] = bookreport.SectionOutput{Lines: lines, Exists: true}
	}
	rep := bookreport.Evaluate(sections)
	byID := map[string]bookreport.LineResult{}
	for _, r := range rep.Lines {
		byID[r.ID] = r
	}
	for _, id := range step0IDs {
		r := byID[id]
		if st := r.Status(); st == "pass" || st == "report" {
			inside++
			statuses = append(statuses, id+"✓")
			continue
		}
		var missed []string
		for _, c := range r.Checks {
			if !c.OK && !c.NA && !c.Soft {
				missed = append(missed, c.Desc)
			}
		}
		statuses = append(statuses, id+"✗ ("+strings.Join(missed, "; ")+")")
	}
	return inside, statuses, rep.Calibrated()
}

// values returns the numbers of a printed line, in order.
func values(line string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '(' || r == ')' || r == ',' }) {
		if len(f) > 0 && (f[0] >= '0' && f[0] <= '9' || f[0] == '-' && len(f) > 1) {
			out = append(out, f)
		}
	}
	return out
}

// search scores every candidate at step 0 and prints one row per candidate (and to tsv, when not nil).
func search(l lab, cands []recipe.Candidate, tsv io.Writer) error {
	header := "candidate\tstep-0 lines inside\tgate\tstep-0 batch (pass/submit/malformed of 64; turns, reads)\tC3 policy, C4 tool\tC5-C7 tokens (max)\toverflow at 24\tsubmit at 6/12/24\tC24 erred | erred pass | pass | tokens\tmalformed per turn\tlines\tbase s\tsettings"
	if tsv != nil {
		fmt.Fprintln(tsv, header)
	}
	for i, c := range cands {
		fmt.Fprintf(os.Stderr, "candidate %d of %d: %s (%s)\n", i+1, len(cands), c.Name, c.Settings)
		row, err := scoreStep0(l, c)
		if err != nil {
			return fmt.Errorf("candidate %s: %w", c.Name, err)
		}
		inside, statuses, gate := row.verdict()
		l121, l125, l127 := row.lines["12.1"], row.lines["12.5"], row.lines["12.7"]
		owner := func(i int) string { return values(l121[i])[0] }
		sweep := func(i int) string { v := values(l121[5+i]); return v[1] + " (" + v[2] + ")" }
		b := values(l127[0])
		gateText := "inside"
		if !gate {
			gateText = "OUTSIDE"
		}
		v24 := values(l125[0])
		fields := []string{c.Name, fmt.Sprintf("%d of %d", inside, len(step0IDs)), gateText,
			fmt.Sprintf("%s/%s/%s; %s, %s", b[0], b[2], b[3], b[4], b[5]),
			owner(2) + ", " + owner(3),
			sweep(0) + " / " + sweep(1) + " / " + sweep(2), values(l121[7])[4],
			fmt.Sprintf("%.2f/%.2f/%.2f", row.submits[0], row.submits[1], row.submits[2]),
			strings.Join(v24, " | "), fmt.Sprintf("%.4f", row.invalid), strings.Join(statuses, " "),
			fmt.Sprintf("%.0f", row.trainSec), c.Settings}
		fmt.Println(strings.Join(fields, " | "))
		if tsv != nil {
			fmt.Fprintln(tsv, strings.Join(fields, "\t"))
		}
	}
	return nil
}
