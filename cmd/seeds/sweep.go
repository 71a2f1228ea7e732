package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/runs"
)

// lab holds what every experiment of the command shares: the chapter (its store, tokenizer, task splits and base
// agent, the notebooks' unless a base-agent flag makes another), the base agent, the training tasks' blind ceiling,
// and the RL configuration every run starts from (the book's defaults unless -lr, -minibatches or -epochs changes
// them). Its runs are the chapter's (ch12.Chapter.Run and its siblings), so seed 0 loads what the notebooks stored.
type lab struct {
	ch           *ch12.Chapter
	base         *gomlxmodel.Model
	rl           agentrl.RLConfig
	blindCeiling float64 // the best blind op's pass rate on the training tasks (C15)
}

// newLab opens the chapter with baseCfg's base agent and makes (or loads) that agent.
func newLab(baseCfg agentrl.BaseConfig, rl agentrl.RLConfig) (lab, error) {
	ch, err := ch12.Setup(ch12.Recipe(baseCfg))
	if err != nil {
		return lab{}, err
	}
	l := lab{ch: ch, rl: rl}
	if l.base, err = ch.Base(); err != nil {
		return lab{}, err
	}
	for _, op := range agentrl.Ops() {
		p, err := agentrl.BlindPass(ch.Train, op)
		if err != nil {
			return lab{}, err
		}
		l.blindCeiling = max(l.blindCeiling, p)
	}
	return l, nil
}

func run(baseCfg agentrl.BaseConfig, rl agentrl.RLConfig, seeds, sampling []uint64) error {
	l, err := newLab(baseCfg, rl)
	if err != nil {
		return err
	}
	numerics := l.ch.Engine.NumericsKey() // the runs, and so the counts, are those of this backend and processor
	fmt.Printf("numerics %s | base agent %s | RL lr %g, %d minibatches, %d epochs, KL %g | RL seeds %v\n",
		numerics, baseKey(l.ch, baseCfg), rl.LR, rl.Minibatches, rl.Epochs, rl.KLCoef, seeds)
	baseHabits, err := trainHabits(l.base, l.ch.Tok, l.ch.Train)
	if err != nil {
		return err
	}
	fmt.Printf("base agent: %s\n", habitsLine(baseHabits))
	if err := l.earlyStop(sampling); err != nil {
		return err
	}
	holds := make([]int, len(checks))
	for _, seed := range seeds {
		o, err := l.runSeed(seed)
		if err != nil {
			return fmt.Errorf("seed %d: %w", seed, err)
		}
		var marks []string
		for i, c := range checks {
			ok := c.holds(o)
			if ok {
				holds[i]++
			}
			marks = append(marks, c.id+mark(ok))
		}
		fmt.Printf("\nseed %d\n", seed)
		printOutcome(o)
		fmt.Printf("  checks        %s\n", strings.Join(marks, " "))
	}
	fmt.Println()
	for i, c := range checks {
		fmt.Printf("%s holds in %d of %d seeds: %s\n", c.id, holds[i], len(seeds), c.rule)
	}
	return nil
}

// printOutcome prints one seed's report lines: what its runs printed in the notebooks' terms.
func printOutcome(o outcome) {
	d, t, m := o.defaultHeld, o.turns3, o.maskedOwn
	fmt.Printf("  step 0        pass %.2f turns %.2f submit rate %.2f reads %.2f (calibration gate: 0.11–0.23, 3.2–4.1, "+
		"0.62–0.82, rare)\n", o.step0.PassRate, o.step0.Turns, o.step0.SubmitRate, o.step0.Reads)
	for i, name := range []string{"outcome (GRPO)", "token GAE", "turn GAE"} {
		a := o.credit[i]
		fmt.Printf("  %-14s held-out pass %.3f reads %.2f tests %.2f turns %.2f | train tests, steps 30-39 %.2f\n",
			name, a.held.PassRate, a.held.Reads, a.held.Tests, a.held.Turns, a.trainTests)
	}
	fmt.Printf("  default       held-out pass %.3f tests %.2f | malformed per turn %.4f → %.4f (×%.1f) | single-turn pass %.3f\n",
		d.PassRate, d.Tests, o.invalidStart, o.invalidEnd, o.invalidEnd/o.invalidStart, o.singleTurn.PassRate)
	fmt.Printf("  default       step 39 policy: %s\n", habitsLine(o.defaultHabits))
	fmt.Printf("  max_turns 3   held-out pass %.3f reads %.2f tests %.2f turns %.2f | batch reward, steps 30-39 %+.3f\n",
		t.PassRate, t.Reads, t.Tests, t.Turns, o.turns3Reward)
	fmt.Printf("  full policy   tests %.2f, masked %.2f | pass %.3f, masked %.3f\n",
		o.fullCtx.Tests, o.fullMasked.Tests, o.fullCtx.PassRate, o.fullMasked.PassRate)
	fmt.Printf("  keep_obs=1    pass %.3f (turns %.2f); full context %.3f (turns %.2f); no observations %.3f\n",
		m.PassRate, m.Turns, o.maskedFull.PassRate, o.maskedFull.Turns, o.mask0.PassRate)
	fmt.Printf("  cost 0.3      held-out pass / reads / turns: constant %.3f / %.2f / %.2f; 3 free calls %.3f / %.2f / %.2f; ramped %.3f / %.2f / %.2f\n",
		o.penalty.PassRate, o.penalty.Reads, o.penalty.Turns, o.allowance.PassRate, o.allowance.Reads, o.allowance.Turns,
		o.ramped.PassRate, o.ramped.Reads, o.ramped.Turns)
	fmt.Printf("  cost 0.3      turns by 10-step window: %.2f %.2f %.2f %.2f\n",
		o.penaltyWindows[0], o.penaltyWindows[1], o.penaltyWindows[2], o.penaltyWindows[3])
	fmt.Printf("  never submit  submit rate at steps 0, 5, 10, 15: %.2f %.2f %.2f %.2f (lowest in 5–15: %.2f)\n",
		o.neverSubmit[0], o.neverSubmit[5], o.neverSubmit[10], o.neverSubmit[15], slices.Min(o.neverSubmit[5:16]))
	fmt.Printf("  fixed         the same with running out of turns scored −1: %.2f %.2f %.2f %.2f (lowest in 5–15: %.2f)\n",
		o.fixedSubmit[0], o.fixedSubmit[5], o.fixedSubmit[10], o.fixedSubmit[15], slices.Min(o.fixedSubmit[5:16]))
	fmt.Printf("  malformed     held-out malformed calls per turn / pass: costs a turn %.3f / %.3f; costs 0.1 %.3f / %.3f; ends the episode %.3f / %.3f\n",
		d.InvalidPerTurn, d.PassRate, o.priced.InvalidPerTurn, o.priced.PassRate, o.stopped.InvalidPerTurn, o.stopped.PassRate)
	f := o.fig.stats()
	fmt.Printf("  figure 12.2   default reads peak %.2f at step %d (steps 30-39 %.2f) | cost 0.05: reads 0.85 at step %d, "+
		"tests peak %.2f at step %d, down to 0.15 at step %d | cost 0.3: turns 1.10 at step %d | 3 turns: reads 0.05 at step %d, "+
		"pass %.2f-%.2f (steps 10-39; -1: never)\n",
		f.defPeak, f.defAt, f.defSettled, f.cheapReads, f.cheapTestPeak, f.cheapTestAt, f.cheapTestsDown, f.dearTurns,
		f.shortReads, slices.Min(f.shortPass), slices.Max(f.shortPass))
}

// baseKey is the store's key of the base agent of recipe c for the chapter's tasks and tokenizer.
func baseKey(ch *ch12.Chapter, c agentrl.BaseConfig) string {
	key, err := runs.BaseKey(agentrl.BaseRun{Engine: ch.Engine, Config: c, Tasks: ch.Train, Tok: ch.Tok})
	if err != nil {
		return "unkeyable: " + err.Error()
	}
	return key
}
