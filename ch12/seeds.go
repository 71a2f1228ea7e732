package ch12

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/chart"
	"github.com/agentrl-go/agentrl/store"
)

// Is a change bigger than noise? One seed's run moves with its draws: the chapter's own lines hold in some RL seeds
// and not in others. BesideSeeds runs a changed run and the chapter's arm it changes under the same seeds and says,
// per statistic, whether the change moved it more than the seeds do.

// Seeds are the RL seeds 0 to n-1, those of the chapter's six-seed table (cmd/seeds) for n = 6.
func Seeds(n int) []uint64 {
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i)
	}
	return seeds
}

// An Arm is one of the chapter's runs, described: its configuration (Cfg; its seed is set per seed), how it trains
// (GRPO's loop with Run's options, Opts, or a loop of its own, Loop) and the environment it trains and is evaluated
// in.
type Arm struct {
	Cfg  agentrl.RLConfig
	Opts []agentrl.RunOption
	// In, when set, is the environment the arm's runs train in from the chapter's base agent (agentrl.InEnv; a
	// Loop's runs train where the loop says) and are evaluated in (HeldOut of the chapter With In); nil: the
	// chapter's own.
	In agentrl.EnvMaker
	// Loop, when set, makes the arm's loop (agentrl.TrainCredit, a loop of a cell's own) from Cfg with the seed set,
	// trained with RunLoop instead of Run; its runs are keyed by the loop it makes, so it must use cfg's seed. Opts
	// are Run's and must then be empty.
	Loop func(cfg agentrl.RLConfig) agentrl.Loop
}

// run trains (or loads) the arm under seed from c's base agent and evaluates the run on the held-out tasks.
func (a Arm) run(c *Chapter, seed uint64) (agentrl.Stats, error) {
	cfg, opts, eval := a.Cfg, a.Opts, c
	cfg.Seed = seed
	if a.In != nil {
		var err error
		if eval, err = c.With(In(a.In)); err != nil {
			return agentrl.Stats{}, err
		}
		opts = append(slices.Clip(opts), agentrl.InEnv(a.In))
	}
	var run *agentrl.Run
	var err error
	if a.Loop != nil {
		run, err = a.loopRun(c, cfg)
	} else {
		run, err = c.Run(cfg, opts...)
	}
	if err != nil {
		return agentrl.Stats{}, err
	}
	return eval.HeldOut(run.Policy, cfg)
}

// loopRun trains (or loads) the loop the arm makes from cfg.
func (a Arm) loopRun(c *Chapter, cfg agentrl.RLConfig) (*agentrl.Run, error) {
	if len(a.Opts) > 0 {
		return nil, errors.New("ch12: BesideSeeds: an Arm with a Loop takes no Opts: set them in the loop it makes")
	}
	loop := a.Loop(cfg)
	if loop == nil {
		return nil, errors.New("ch12: BesideSeeds: the Arm's Loop made no loop")
	}
	if _, seed := loop.Plan(); seed != cfg.Seed {
		return nil, fmt.Errorf("ch12: BesideSeeds: the Arm's Loop made a loop of seed %d for seed %d: make it from "+
			"the configuration it is given (its Seed)", seed, cfg.Seed)
	}
	return c.RunLoop(loop)
}

// SeedStat is one statistic of an arm's held-out evaluation under each seed.
type SeedStat struct {
	Name string
	Of   func(agentrl.Stats) float64
}

// SeedStats are the statistics BesideSeeds compares: held-out pass rate, reads, tests and turns per episode.
var SeedStats = []SeedStat{
	{"held-out pass", func(s agentrl.Stats) float64 { return s.PassRate }},
	{"reads", func(s agentrl.Stats) float64 { return s.Reads }},
	{"tests", func(s agentrl.Stats) float64 { return s.Tests }},
	{"turns", func(s agentrl.Stats) float64 { return s.Turns }},
	{"malformed/turn", func(s agentrl.Stats) float64 { return s.InvalidPerTurn }},
}

// Beside is a changed arm and the chapter's arm under the same seeds: each seed's run (trained or loaded) and its
// held-out statistics (HeldOut, under the arm's own configuration).
type Beside struct {
	Seeds            []uint64
	Changed, Chapter []agentrl.Stats
}

// BesideSeeds trains (or loads) changed and the chapter's arm under each of seeds (each arm's Cfg.Seed set to the
// seed, each run stored under its own key, as Run stores it), as many at once as the program has processors, and
// evaluates each run on the held-out tasks. A second call loads everything. An interrupt saves every run in
// progress and starts no other: the error wraps store.ErrInterrupted and says how many runs are stored, and the
// next call loads those and resumes the others. Its String is the summary a cell prints, its Figure the per-seed
// values drawn.
func BesideSeeds(c *Chapter, changed, chapter Arm, seeds []uint64) (Beside, error) {
	if len(seeds) < 2 {
		return Beside{}, fmt.Errorf("ch12: BesideSeeds: %d seeds: a spread needs two or more (Seeds(6))", len(seeds))
	}
	b := Beside{Seeds: seeds, Changed: make([]agentrl.Stats, len(seeds)), Chapter: make([]agentrl.Stats, len(seeds))}
	type job struct {
		arm  Arm
		seed uint64
		into *agentrl.Stats
	}
	var jobs []job
	for i, s := range seeds {
		jobs = append(jobs, job{changed, s, &b.Changed[i]}, job{chapter, s, &b.Chapter[i]})
	}
	errs := make([]error, len(jobs))
	var interrupted atomic.Bool
	var done atomic.Int32
	limit := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit <- struct{}{}
			defer func() { <-limit }()
			if interrupted.Load() {
				errs[i] = errNotStarted
				return
			}
			*j.into, errs[i] = j.arm.run(c, j.seed)
			switch {
			case errs[i] == nil:
				done.Add(1)
			case errors.Is(errs[i], store.ErrInterrupted):
				interrupted.Store(true)
			}
		}()
	}
	wg.Wait()
	if interrupted.Load() {
		var other []error
		for _, err := range errs {
			if err != nil && err != errNotStarted && !errors.Is(err, store.ErrInterrupted) {
				other = append(other, err)
			}
		}
		return b, errors.Join(append([]error{fmt.Errorf("ch12: BesideSeeds: %w: %d of %d runs stored, the progress of "+
			"those under way saved: run it again to resume", store.ErrInterrupted, done.Load(), len(jobs))}, other...)...)
	}
	return b, errors.Join(errs...)
}

// errNotStarted is the error of a run that BesideSeeds did not start after an interrupt.
var errNotStarted = errors.New("not started: interrupted")

// String is the summary: per statistic, the changed arm's and the chapter's arm's value under each seed with their
// mean and standard deviation, and the mean of the per-seed differences with its standard error; the difference is
// larger than the seeds' spread where it exceeds two standard errors (about 95% for a normal spread of six seeds).
func (b Beside) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "RL seeds %s | per seed | mean ± sd | changed - chapter's arm, paired over seeds\n", seedRange(b.Seeds))
	for _, st := range SeedStats {
		ch, ar := values(b.Changed, st.Of), values(b.Chapter, st.Of)
		diff := make([]float64, len(ch))
		for i := range ch {
			diff[i] = ch[i] - ar[i]
		}
		d, sd := meanSD(diff)
		se := sd / math.Sqrt(float64(len(diff)))
		verdict := "within the seeds' spread"
		if math.Abs(d) > 2*se {
			verdict = "larger than the seeds' spread"
		}
		fmt.Fprintf(&s, "%-14s changed       | %s | %s\n", st.Name, row(ch), spread(ch))
		fmt.Fprintf(&s, "%-14s chapter's arm | %s | %s | %+.3f ± %.3f: %s\n", "", row(ar), spread(ar), d, se, verdict)
	}
	return s.String()
}

func values(stats []agentrl.Stats, of func(agentrl.Stats) float64) []float64 {
	out := make([]float64, len(stats))
	for i, s := range stats {
		out[i] = of(s)
	}
	return out
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(max(len(xs)-1, 1)))
}

func row(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(parts, " ")
}

func spread(xs []float64) string {
	m, sd := meanSD(xs)
	return fmt.Sprintf("%.3f ± %.3f", m, sd)
}

// seedRange names seeds as "0-5" when they are consecutive, else lists them.
func seedRange(seeds []uint64) string {
	for i, s := range seeds {
		if s != seeds[0]+uint64(i) {
			return fmt.Sprint(seeds)
		}
	}
	return fmt.Sprintf("%d-%d", seeds[0], seeds[len(seeds)-1])
}

// Figure draws the summary: one panel per statistic, a column of dots for each arm, one dot per seed (in the order
// of Seeds) and a bar at the mean.
func (b Beside) Figure() chart.Figure {
	var panels []chart.Panel
	for _, st := range SeedStats {
		panels = append(panels, chart.Panel{Title: st.Name, Lines: []chart.Series{
			{Name: "changed", Values: values(b.Changed, st.Of)},
			{Name: "chapter's arm", Values: values(b.Chapter, st.Of)},
		}})
	}
	return chart.Strips(fmt.Sprintf("Held out under RL seeds %s: the changed arm and the chapter's", seedRange(b.Seeds)), panels)
}
