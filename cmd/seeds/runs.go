package main

import (
	"fmt"
	"math"
	"slices"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// runSeed trains (or loads) the runs of one RL seed and evaluates them as the notebooks do.
func (l lab) runSeed(seed uint64) (outcome, error) {
	var o outcome
	cfg := l.rl
	cfg.Seed = seed
	if err := l.creditArms(&o, seed); err != nil {
		return o, err
	}
	def, err := l.defaultRun(&o, cfg)
	if err != nil {
		return o, err
	}
	short := cfg
	short.MaxTurns = 3
	arm, err := l.ch.Run(short)
	if err != nil {
		return o, err
	}
	if o.turns3, err = l.ch.HeldOut(arm.Policy, short); err != nil {
		return o, err
	}
	o.turns3Reward, o.blindCeiling = mean(arm.History[30:40], func(s agentrl.Stats) float64 { return s.Reward }), l.blindCeiling
	o.fig.short = arm.History
	if err := l.costRemedies(&o, cfg); err != nil {
		return o, err
	}
	if err := l.pricedErrors(&o, cfg); err != nil {
		return o, err
	}
	return o, l.contextArms(&o, def.Policy, cfg)
}

// defaultRun trains (or loads) the default run of cfg's seed, evaluates it as 12.3, 12.5 and 12.6 do, and returns
// it.
func (l lab) defaultRun(o *outcome, cfg agentrl.RLConfig) (*agentrl.Run, error) {
	def, err := l.ch.Run(cfg)
	if err != nil {
		return nil, err
	}
	o.step0 = def.History[0].Stats
	o.fig.def = def.History
	if o.invalidStart, o.invalidEnd, err = malformedPerTurn(def); err != nil {
		return nil, err
	}
	if o.defaultHeld, err = l.ch.HeldOut(def.Policy, cfg); err != nil {
		return nil, err
	}
	if o.defaultHabits, err = trainHabits(def.Policy, l.ch.Tok, l.ch.Train); err != nil {
		return nil, err
	}
	var singles []agentrl.Task
	for _, t := range l.ch.HeldOutTasks {
		singles = append(singles, agentrl.SingleTurn(t))
	}
	mixed := func() (agentrl.Env, error) {
		reward, err := cfg.Reward.Func()
		if err != nil {
			return nil, err
		}
		return agentrl.NewMixedTurnEnv(cfg.MaxTurns, reward, cfg.MaxEdits)
	}
	o.singleTurn, err = agentrl.Evaluate(def.Policy, singles, l.ch.Tok, ch12.HeldOutEpisodes, agentrl.NewRNG(ch12.HeldOutSeed), cfg, mixed)
	return def, err
}

// contextArms trains (or loads) 12.4's keep_obs=1 run of cfg's seed and evaluates it, and the default policy def,
// under the views 12.4 compares.
func (l lab) contextArms(o *outcome, def *gomlxmodel.Model, cfg agentrl.RLConfig) error {
	masked, err := l.ch.RunLoop(agentrl.TrainContext{Tasks: l.ch.Train, Tok: l.ch.Tok, Cfg: cfg, Steps: ch12.Steps, Context: agentrl.KeepObs(1)})
	if err != nil {
		return err
	}
	for _, e := range []struct {
		policy  *gomlxmodel.Model
		keepObs int
		into    *agentrl.Stats
	}{
		{def, -1, &o.fullCtx}, {def, 1, &o.fullMasked},
		{masked.Policy, -1, &o.maskedFull}, {masked.Policy, 1, &o.maskedOwn}, {masked.Policy, 0, &o.mask0},
	} {
		*e.into, err = agentrl.EvaluateContext(e.policy, l.ch.HeldOutTasks, l.ch.Tok, agentrl.KeepObs(e.keepObs),
			ch12.HeldOutEpisodes, ch12.HeldOutSeed, cfg)
		if err != nil {
			return err
		}
	}
	return nil
}

// malformedPerTurn returns the malformed calls per turn of a run's logged episodes in steps 0–4 and 35–39, each
// window's calls pooled as 12.5 does (all malformed calls over all turns of the window).
func malformedPerTurn(run *agentrl.Run) (start, end float64, err error) {
	steps, err := agentrl.LogByStep(run.History, run.Log)
	if err != nil {
		return 0, 0, err
	}
	pooled := func(from, to int) float64 { return agentrl.InfoStats(slices.Concat(steps[from:to]...)).InvalidPerTurn }
	return pooled(0, 5), pooled(35, 40), nil
}

// earlyStop repeats §12.5's C24/C25 comparison under each sampling seed: the base agent's episodes on the
// training tasks (8 per task) with error observations and with early termination after one malformed call. C25's
// rules want early termination to save policy tokens (a ratio in [0.85, 1.00]) and to leave the overall pass rate
// within 0.06. The two samples share their seed and so their first episodes; they part at the first episode that
// ends differently, since the lockstep sampler's later draws then land on other episodes.
func (l lab) earlyStop(seeds []uint64) error {
	cfg := l.rl
	sample := func(f agentrl.EnvFactory, seed uint64) (erred, pass, perEpisode float64, err error) {
		trajs, err := agentrl.SampleGroups(l.base, f, l.ch.Train, l.ch.Tok, cfg, agentrl.NewRNG(seed))
		if err != nil {
			return 0, 0, 0, err
		}
		for _, t := range trajs {
			if t.Info.NInvalid > 0 {
				erred++
			}
			pass += t.Reward
			for _, m := range t.ActionMask {
				perEpisode += float64(m)
			}
		}
		n := float64(len(trajs))
		return erred / n, pass / n, perEpisode / n, nil
	}
	holds := 0
	fmt.Println("\nC25, base agent on the training tasks: policy tokens per episode and overall pass, error observation → early stop")
	for _, seed := range seeds {
		e1, p1, t1, err := sample(agentrl.EnvFactoryOf(cfg), seed)
		if err != nil {
			return err
		}
		e2, p2, t2, err := sample(agentrl.EarlyStop{Cfg: cfg, MaxInvalid: 1}.NewEnv, seed)
		if err != nil {
			return err
		}
		ok := t2/t1 >= 0.85 && t2/t1 <= 1.00 && math.Abs(p2-p1) <= 0.06
		if ok {
			holds++
		}
		fmt.Printf("  sampling seed %d: tokens %.1f → %.1f (×%.3f) | pass %.3f → %.3f | episodes with an error %.3f, %.3f %s\n",
			seed, t1, t2, t2/t1, p1, p2, e1, e2, mark(ok))
	}
	fmt.Printf("C25 holds in %d of %d sampling seeds: early termination saves policy tokens (ratio in [0.85, 1.00]) "+
		"and keeps the overall pass rate (within 0.06)\n", holds, len(seeds))
	return nil
}

// creditArms trains (or loads) the three §12.2 arms of one RL seed, from the notebook's warmed-up critic, and
// evaluates them as 12.2 does.
func (l lab) creditArms(o *outcome, seed uint64) error {
	costCfg := l.rl
	costCfg.Reward.StepPenalty = 0.05
	critic, err := l.ch.Critic(costCfg, agentrl.WarmCritic) // warmed up once, from the base agent's seed-0 episodes
	if err != nil {
		return err
	}
	costCfg.Seed = seed
	runs := make([]*agentrl.Run, 3)
	if runs[0], err = l.ch.Run(costCfg); err != nil {
		return err
	}
	for i, scheme := range []string{"token", "turn"} {
		credit := agentrl.TrainCredit{Tasks: l.ch.Train, Tok: l.ch.Tok, Cfg: costCfg, Steps: ch12.Steps,
			Scheme: scheme, Lambda: 0.95, Critic: critic}
		if runs[i+1], err = l.ch.RunLoop(credit); err != nil {
			return err
		}
	}
	for i, r := range runs {
		if o.credit[i].held, err = l.ch.HeldOut(r.Policy, costCfg); err != nil {
			return err
		}
		o.credit[i].trainTests = mean(r.History[30:40], func(s agentrl.Stats) float64 { return s.Tests })
	}
	o.fig.cheap = runs[0].History // the outcome arm is §12.3's 0.05-cost run
	return nil
}

// costRemedies trains (or loads) the never-submit run of §12.7 with and without its fix, the 0.3 step-cost run of
// §12.3 and the two remedies 12.7 runs on it (a free allowance of 3 calls, a cost ramped in over the 40 steps), and
// evaluates them as the notebooks do.
func (l lab) costRemedies(o *outcome, cfg agentrl.RLConfig) error {
	penalty := cfg
	penalty.Reward.StepPenalty = 0.3
	constant, err := l.ch.Run(penalty)
	if err != nil {
		return err
	}
	o.penaltyReward = mean(constant.History[30:40], func(s agentrl.Stats) float64 { return s.Reward })
	o.fig.dear = constant.History
	for w := range o.penaltyWindows {
		o.penaltyWindows[w] = mean(constant.History[10*w:10*w+10], func(s agentrl.Stats) float64 { return s.Turns })
	}
	never := cfg
	never.Reward.WrongSubmit = -1
	fixed := never
	fixed.Reward.Unsubmitted = -1
	if o.neverSubmit, err = l.submitRates(never); err != nil {
		return err
	}
	if o.fixedSubmit, err = l.submitRates(fixed); err != nil {
		return err
	}
	allowance := penalty
	allowance.Reward.FreeCalls = 3
	free, err := l.ch.Run(allowance)
	if err != nil {
		return err
	}
	ramped, err := l.ch.Run(penalty, agentrl.WithSchedule(agentrl.RampedPenalty(penalty, ch12.Steps)))
	if err != nil {
		return err
	}
	for _, e := range []struct {
		run  *agentrl.Run
		into *agentrl.Stats
	}{{constant, &o.penalty}, {free, &o.allowance}, {ramped, &o.ramped}} {
		if *e.into, err = l.ch.HeldOut(e.run.Policy, penalty); err != nil {
			return err
		}
	}
	return nil
}

// pricedErrors trains (or loads) the two default runs of 12.5's last section, in which a malformed call costs 0.1
// reward or ends the episode, and evaluates them on the held-out tasks in the default environment.
func (l lab) pricedErrors(o *outcome, cfg agentrl.RLConfig) error {
	priced := cfg
	priced.Reward.InvalidPenalty = 0.1
	for _, e := range []struct {
		cfg  agentrl.RLConfig
		opts []agentrl.RunOption
		into *agentrl.Stats
	}{{priced, nil, &o.priced}, {cfg, []agentrl.RunOption{agentrl.InEnv(agentrl.EarlyStop{Cfg: cfg, MaxInvalid: 1})}, &o.stopped}} {
		run, err := l.ch.Run(e.cfg, e.opts...)
		if err != nil {
			return err
		}
		if *e.into, err = l.ch.HeldOut(run.Policy, cfg); err != nil {
			return err
		}
	}
	return nil
}

// submitRates trains (or loads) the chapter's run of cfg and returns the submit rate of each step's batch.
func (l lab) submitRates(cfg agentrl.RLConfig) ([]float64, error) {
	run, err := l.ch.Run(cfg)
	if err != nil {
		return nil, err
	}
	rates := make([]float64, len(run.History))
	for i, h := range run.History {
		rates[i] = h.SubmitRate
	}
	return rates, nil
}
