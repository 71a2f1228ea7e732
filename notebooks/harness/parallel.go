package harness

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentrl-go/agentrl/store"
)

// JobsEnv names the environment variable that says how many notebooks TestNotebooks (and, without -jobs, the
// execute command) executes at once: a positive integer.
const JobsEnv = "AGENTRL_NOTEBOOK_JOBS"

// DefaultJobs is how many notebooks to execute at once on this machine: one for every core.
//
// Each notebook runs on its own kernel, which runs one cell program at a time: a program that trains on XLA's CPU
// client (its thread pool spreads a step over every core) beside the Go code that samples episodes, after `go build`
// of the cell. Alone, a notebook leaves cores idle while GoNB builds and starts its cells and while its program runs
// single-threaded stretches; a second notebook fills them, and two processes on two cores each spend less time in
// the thread pool's hand-offs than one spread over both. The notebooks share results through the result store,
// which lets only one process compute a result: the others wait for it and load it, so running them side by side
// computes nothing twice and prints what each would print alone.
func DefaultJobs() int { return max(1, runtime.NumCPU()) }

// Jobs returns $AGENTRL_NOTEBOOK_JOBS, or DefaultJobs when it is unset or empty.
func Jobs() (int, error) {
	s := strings.TrimSpace(os.Getenv(JobsEnv))
	if s == "" {
		return DefaultJobs(), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive number of notebooks to execute at once", JobsEnv, s)
	}
	return n, nil
}

// ForEach calls fn(i, started) for i from 0 to n-1, each on a goroutine of its own, in order and with at most jobs
// (at least 1) running at once: it calls fn(i+1) only once fn(i) has called started (say, once it has begun its
// notebook and shown so) or returned, and when fewer than jobs calls are running. It returns when all it started have
// returned, how many it started (the first, in order): once ctx is done it starts no more. One call's failure is
// fn's business: it stops no other.
func ForEach(ctx context.Context, n, jobs int, fn func(i int, started func())) (count int) {
	slots := make(chan struct{}, max(1, jobs))
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return count
		}
		if ctx.Err() != nil { // both were ready: select chose at random
			return count
		}
		count++
		wg.Add(1)
		begun := make(chan struct{})
		var once sync.Once
		started := func() { once.Do(func() { close(begun) }) }
		go func() {
			defer func() { started(); <-slots; wg.Done() }()
			fn(i, started)
		}()
		<-begun
	}
	return count
}

// WithLog returns a copy of r that logs to w.
func (r *Runner) WithLog(w io.Writer) *Runner {
	c := *r
	c.Log = w
	return &c
}

// LongestFirst returns paths in the order in which to start them when jobs notebooks run at once: the longest
// expected first, the rest in their given order among equals (longest-processing-time-first scheduling: the last
// notebooks to start are short ones, so the slots end close together). In the chapter's order the longest, 12.3,
// starts third and ends well after the others. A notebook's expected time is its wall time in prior (the last
// run's, TimesFile) when prior has every notebook's, else the time its committed outputs say its cells spent
// computing stored results (StoreActivity: a fresh clone's estimate of a cold run); a notebook without one goes
// first. With one job the order changes nothing but the reading, and paths come back as given.
func LongestFirst(paths []string, jobs int, prior map[string]time.Duration) []string {
	out := slices.Clone(paths)
	if jobs < 2 {
		return out
	}
	est := func(p string) time.Duration { return prior[filepath.Base(p)] }
	if slices.ContainsFunc(paths, func(p string) bool { return est(p) <= 0 }) {
		committed := make(map[string]time.Duration, len(paths))
		for _, p := range paths {
			committed[p] = committedCompute(p)
		}
		est = func(p string) time.Duration { return committed[p] }
	}
	key := func(p string) time.Duration { // unknown first
		if d := est(p); d > 0 {
			return d
		}
		return math.MaxInt64
	}
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(key(b), key(a)) })
	return out
}

// committedCompute is the time the committed notebook at path says its cells spent computing stored results (0 if
// it cannot be read or computed nothing).
func committedCompute(path string) time.Duration { return ToCompute(path, nil, nil) }

// ComputeTimes reads, from the committed notebooks at paths, how long each result they computed took, by key.
func ComputeTimes(paths []string) map[string]time.Duration {
	took := map[string]time.Duration{}
	for _, p := range paths {
		nb, err := Load(p)
		if err != nil {
			continue
		}
		computed, _ := StoreActivity(nb)
		for _, c := range computed {
			took[c.Key] = c.Took
		}
	}
	return took
}

// ToCompute is the time the committed notebook at path says computing the results it needs takes, for those that
// stored does not hold (every one where stored is nil): those its cells computed, at their own times, and those they
// loaded that took computed elsewhere (another notebook of the chapter, ComputeTimes). It is 0 where the notebook
// cannot be read or needs nothing. A key changes with the code, so after a change of the code, or on a store that
// holds nothing, it is the time of a cold execution as the committed one measured it.
func ToCompute(path string, stored func(key string) bool, took map[string]time.Duration) time.Duration {
	return toCompute([]string{path}, nil, stored, took)[filepath.Base(path)]
}

// toCompute is ToCompute of the notebooks at paths run together, by file name, for those not in known (whose times
// are known otherwise): a result counts once, for the notebook whose committed outputs computed it, or, when none of
// them did, for the first of those to estimate that loaded it (the others wait for it).
func toCompute(paths []string, known map[string]bool, stored func(key string) bool, took map[string]time.Duration) map[string]time.Duration {
	type needs struct {
		computed []Computed
		loaded   []string
	}
	nbs := make([]needs, len(paths))
	owned := map[string]bool{} // computed by one of paths
	for i, p := range paths {
		nb, err := Load(p)
		if err != nil {
			continue
		}
		nbs[i].computed, _ = StoreActivity(nb)
		nbs[i].loaded = LoadedKeys(nb)
		for _, c := range nbs[i].computed {
			owned[c.Key] = true
		}
	}
	counted := map[string]bool{}
	count := func(key string, d time.Duration) time.Duration {
		if counted[key] || (stored != nil && stored(key)) {
			return 0
		}
		counted[key] = true
		return d
	}
	out := make(map[string]time.Duration, len(paths))
	for i, p := range paths {
		if known[filepath.Base(p)] {
			continue
		}
		var total time.Duration
		for _, c := range nbs[i].computed {
			total += count(c.Key, c.Took)
		}
		for _, key := range nbs[i].loaded {
			if !owned[key] {
				total += count(key, took[key])
			}
		}
		out[filepath.Base(p)] = total
	}
	return out
}

// Expected is the time each notebook at paths is expected to take, by file name, for the progress line and the
// order of a run: its wall time in prior (the last run's on this machine, TimesFile) where prior has one, else
// its share of toCompute's estimate from the committed outputs of the run's notebooks, the committed chapter's
// (the notebooks at chapter: the times of the results they loaded) and what stored holds (a fresh clone has no
// TimesFile); a notebook with neither is left out (its time is unknown).
func Expected(paths []string, prior map[string]time.Duration, stored func(key string) bool, chapter []string) map[string]time.Duration {
	known := map[string]bool{}
	for _, p := range paths {
		known[filepath.Base(p)] = prior[filepath.Base(p)] > 0
	}
	est := toCompute(paths, known, stored, ComputeTimes(append(slices.Clone(chapter), paths...)))
	out := make(map[string]time.Duration, len(paths))
	for _, p := range paths {
		name := filepath.Base(p)
		if d := prior[name]; d > 0 {
			out[name] = d
		} else if d := est[name]; d > 0 {
			out[name] = d
		}
	}
	return out
}

// StoredIn says whether s holds a result under a key; nil (nothing known to be stored) where s cannot be listed.
func StoredIn(s *store.Store) func(key string) bool {
	entries, err := s.Entries()
	if err != nil {
		return nil
	}
	keys := make(map[string]bool, len(entries))
	for _, e := range entries {
		keys[e.Key] = true
	}
	return func(key string) bool { return keys[key] }
}
