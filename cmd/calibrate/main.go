// Command calibrate checks the RL base agent and three 40-step GRPO runs at full scale against the book's numbers:
// the seed-0 step-0 batch (pass 0.17, turns 3.64, submit rate 0.72, 2–8% of episodes with a malformed call,
// reads rare), the default run's held-out pass (book 0.762), the 0.3-penalty collapse (turns ≈ 1 after 10
// steps) and the never-submit run (held-out pass 0.706, turns 4.51). It prints the time of each part, the seconds
// per training step of each run it computes, and the graph compilations so far.
//
//	go run ./cmd/calibrate            # results from the result store when present
//	go run ./cmd/calibrate -fresh     # recompute everything in a temporary store (timings of a cold cache;
//	                                  # the store is removed at the end, so an interrupted run starts over)
//	go run ./cmd/calibrate -lr 5e-4 -minibatches 2 -mapping-right 0.8   # try other settings
//
// The settings flags change the base agent's demonstrations and the RL update; with their defaults the runs are
// those of the notebooks.
//
// -search runs the calibration search instead (search.go, search_rl.go): each line of its file is a candidate, a
// name and key=value settings of the base agent, the gym's observation format and the RL update
// (internal/recipe), scored at step 0 by the report's own rules, or with -rl by five 40-step runs:
//
//	go run ./cmd/calibrate -search round.txt -out round.tsv
//	go run ./cmd/calibrate -search finalists.txt -rl
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/internal/recipe"
	"github.com/agentrl-go/agentrl/store"
)

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: go run ./cmd/calibrate [flags]

Checks the RL base agent and three 40-step GRPO runs at full scale against the book's numbers: the seed-0 step-0
batch (pass 0.17, turns 3.64, submit rate 0.72, 2-8% of episodes with a malformed call, reads rare), the default
run's held-out pass (book 0.762), the 0.3-penalty collapse (turns about 1 after 10 steps) and the never-submit run
(held-out pass 0.706, turns 4.51). It prints the time of each part, the seconds per training step and the graph
compilations so far. Results come from the result store when present (-fresh recomputes them); the settings flags
change the base agent's demonstrations and the RL update, and with their defaults the runs are the notebooks'.

With -search FILE it runs the calibration search instead: each line of FILE is a candidate, a name and then
key=value settings over the chapter's configuration (a line with a name alone is the chapter's), e.g.

  winner obs=inputs submit=0.4 late-submit=0.2 stall-test=0.5 lr=4e-4

Each candidate's base agent prints 12.1's owner counts and budget sweep, 12.5's error line and the step-0 batch,
scored by the report's rules (one row each); -rl trains five 40-step runs per candidate instead and prints the
bands and mechanisms they decide. Settings:
`+recipe.Keys()+`
Flags:
`)
		flag.PrintDefaults()
	}
	fresh := flag.Bool("fresh", false, "compute in a new temporary store instead of the default one (removed at the end: an interrupted run starts over)")
	base, rl := agentrl.DefaultBaseConfig(), agentrl.DefaultRLConfig()
	flag.Float64Var(&rl.LR, "lr", rl.LR, "RL learning rate")
	flag.IntVar(&rl.Minibatches, "minibatches", rl.Minibatches, "minibatches per RL update")
	flag.IntVar(&rl.Epochs, "epochs", rl.Epochs, "passes over each batch")
	flag.Float64Var(&base.MappingRightProb, "mapping-right", base.MappingRightProb, "base agent: right op after a read in mapping demonstrations")
	flag.IntVar(&base.MappingDemos, "mapping-demos", base.MappingDemos, "base agent: mapping demonstrations")
	flag.Float64Var(&base.ReadProb, "read-prob", base.ReadProb, "base agent: episodes that start with a read")
	flag.Float64Var(&base.SubmitFirstProb, "submit-first", base.SubmitFirstProb, "base agent: episodes that submit at once")
	flag.Float64Var(&base.SubmitProb, "submit", base.SubmitProb, "base agent: episodes that submit after their edit")
	flag.Float64Var(&base.StallOnFailProb, "stall-on-fail", base.StallOnFailProb, "base agent: a failing test makes the episode stall")
	searchFile := flag.String("search", "", "score the candidates this file lists (one per line: a name, then key=value settings) at step 0, one row each, and skip the runs")
	out := flag.String("out", "", "with -search: also write the rows to this tab-separated file")
	rlRuns := flag.Bool("rl", false, "with -search: instead of the step-0 table, train each candidate's default, 0.05-cost, never-submit and 0.3-cost runs and its 3-turn arm, and print the bands and mechanisms they decide")
	split := flag.Bool("split", false, "sample with the split decoder (gomlxmodel.ScheduleSplit; on XLA another realization, the search's since its second stage)")
	flag.Parse()
	if *split {
		gomlxmodel.SetDecoderSchedule(gomlxmodel.ScheduleSplit)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "calibrate: unexpected arguments %q (settings are flags, e.g. -lr 5e-4)\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if *searchFile != "" {
		if err := runSearch(*fresh, *searchFile, *out, *rlRuns); err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*fresh, base, rl); err != nil {
		if *fresh && errors.Is(err, store.ErrInterrupted) {
			err = errors.New("interrupted; -fresh computed in a temporary store, now removed, so nothing is kept to resume")
		}
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(1)
	}
}

// lab is what every part of the command reads: the chapter (its store, tokenizer and task splits).
type lab struct {
	ch *ch12.Chapter
}

// openLab opens the chapter on the default result store, or on a temporary one (fresh) that cleanup removes.
func openLab(fresh bool) (l lab, cleanup func(), err error) {
	cleanup = func() {}
	var s *store.Store
	if fresh {
		dir, err := os.MkdirTemp("", "agentrl-calibrate-")
		if err != nil {
			return l, nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		if s, err = store.Open(dir); err != nil {
			cleanup()
			return l, nil, err
		}
	} else if s, err = store.Default(); err != nil {
		return l, nil, err
	}
	if l.ch, err = ch12.SetupIn(s, agentrl.DefaultBaseConfig()); err != nil {
		cleanup()
		return lab{}, nil, err
	}
	return l, cleanup, nil
}

// candidate is the chapter on the tasks gen makes, with base as the recipe of its base agent, and that agent, made
// or loaded.
func (l lab) candidate(base agentrl.BaseConfig, gen agentrl.TaskGen) (*ch12.Chapter, *gomlxmodel.Model, error) {
	ch, err := l.ch.WithTasks(gen)
	if err == nil {
		ch, err = ch.WithBase(base)
	}
	if err != nil {
		return nil, nil, err
	}
	agent, err := ch.Base()
	return ch, agent, err
}

// runSearch scores the candidates of file at step 0 (search.go), or with rlRuns by their runs (search_rl.go).
func runSearch(fresh bool, file, out string, rlRuns bool) error {
	text, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	cands, err := recipe.ParseFile(string(text))
	if err != nil {
		return fmt.Errorf("%s: %w\nsettings:\n%s", file, err, recipe.Keys())
	}
	l, cleanup, err := openLab(fresh)
	if err != nil {
		return err
	}
	defer cleanup()
	if rlRuns {
		return rlStage(l, cands)
	}
	var tsv io.Writer
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		tsv = f
	}
	return search(l, cands, tsv)
}

func run(fresh bool, baseCfg agentrl.BaseConfig, cfg agentrl.RLConfig) error {
	if err := errors.Join(cfg.Validate(), baseCfg.Validate()); err != nil { // before minutes of training
		return err
	}
	backend, err := gomlxmodel.Backend()
	if err != nil {
		return err
	}
	fmt.Printf("backend: %s\n", backend.Name())
	l, cleanup, err := openLab(fresh)
	if err != nil {
		return err
	}
	defer cleanup()
	start := time.Now()
	ch, base, err := l.candidate(baseCfg, agentrl.TaskGen{})
	if err != nil {
		return err
	}
	tok, train := ch.Tok, ch.Train
	fmt.Printf("base agent: %d parameters, ready in %.1fs; %s\n", base.NumParams(), time.Since(start).Seconds(), compiled())

	step0, _, err := agentrl.SampleStep(base, nil, train, tok, cfg, agentrl.NewRNG(cfg.Seed))
	if err != nil {
		return err
	}
	report("step-0 batch (seed 0, 64 episodes)", step0, "book: pass 0.17 | turns 3.64 | submit 0.72 | erred 0.044-0.050")
	groups, err := agentrl.SampleGroups(base, nil, train, tok, cfg, agentrl.NewRNG(2))
	if err != nil {
		return err
	}
	report("20 tasks x 8 (seed 2)", groups, "book (C24): erred 0.044 | pass 0.131; its default run, steps 0-4 (C26): malformed per turn 0.0189")

	for _, arm := range []struct {
		name string
		cfg  agentrl.RLConfig
	}{{"default", cfg}, {"penalty 0.3", withPenalty(cfg, 0.3)}, {"never-submit", withWrongSubmit(cfg, -1)}} {
		start := time.Now()
		r, err := ch.Run(arm.cfg)
		if err != nil {
			return err
		}
		trained := time.Since(start)
		start = time.Now()
		s, err := ch.HeldOut(r.Policy, arm.cfg)
		if err != nil {
			return err
		}
		fmt.Printf("%-12s 40 steps ready in %.1fs (%.2fs per step when computed); held-out evaluation in %.1fs; %s\n", arm.name,
			trained.Seconds(), trained.Seconds()/40, time.Since(start).Seconds(), compiled())
		fmt.Printf("%-12s held-out pass %.3f | reads %.2f | tests %.2f | edits %.2f | turns %.2f\n", arm.name,
			s.PassRate, s.Reads, s.Tests, s.Edits, s.Turns)
		fmt.Printf("%-12s by 10-step window, turns %v, submit rate %v\n", arm.name,
			windows(r.History, func(s agentrl.Stats) float64 { return s.Turns }),
			windows(r.History, func(s agentrl.Stats) float64 { return s.SubmitRate }))
	}
	fmt.Println("book: default held-out pass 0.762; penalty 0.3 turns by window [1.82 1.02 1.01 1.01];",
		"never-submit held-out pass 0.706, turns 4.51")
	return nil
}

// compiled reports the graph compilations of the process so far, in all and per graph kind.
func compiled() string {
	n, d := gomlxmodel.CompileStats()
	byKind := gomlxmodel.CompileStatsByKind()
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		kinds = append(kinds, fmt.Sprintf("%s %d/%.1fs", k, byKind[k].Graphs, byKind[k].Total.Seconds()))
	}
	return fmt.Sprintf("%d graph compilations so far, %.1fs with their first run (%s)", n, d.Seconds(), strings.Join(kinds, ", "))
}

func withWrongSubmit(cfg agentrl.RLConfig, r float64) agentrl.RLConfig {
	cfg.Reward.WrongSubmit = r
	return cfg
}

func withPenalty(cfg agentrl.RLConfig, c float64) agentrl.RLConfig {
	cfg.Reward.StepPenalty = c
	return cfg
}

func report(name string, trajs []agentrl.Trajectory, book string) {
	s := agentrl.BehaviorStats(trajs)
	erred := 0
	for _, t := range trajs {
		if t.Info.NInvalid > 0 {
			erred++
		}
	}
	fmt.Printf("%s: pass %.3f | turns %.2f | submit %.2f | reads %.2f | tests %.2f | erred %.3f | malformed per turn %.4f\n  %s\n",
		name, s.PassRate, s.Turns, s.SubmitRate, s.Reads, s.Tests, float64(erred)/float64(len(trajs)), s.InvalidPerTurn, book)
}

// windows averages f over consecutive 10-step windows of a history, rounded to 2 decimals.
func windows(history []agentrl.StepStats, f func(agentrl.Stats) float64) []float64 {
	var out []float64
	for w := 0; w+10 <= len(history); w += 10 {
		total := 0.0
		for _, h := range history[w : w+10] {
			total += f(h.Stats)
		}
		out = append(out, math.Round(total*10)/100)
	}
	return out
}
