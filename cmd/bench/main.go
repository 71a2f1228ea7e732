// Command bench measures what a reader of the chapter waits for, in one run on this machine: the chapter executed
// from an empty result store (cold) and again with every result stored (warm), per notebook, and where the cold
// chapter's time went (its stored results computed, by kind); the share of a default 40-step GRPO run that goes to
// compiling graphs, with the compiled-graph cache off and on, and the token positions its sampling executed against
// those it needed (Decoder padding); and, where PyTorch is installed, a GRPO step of the chapter's workload (from its
// RL base agent) against PyTorch on the XLA and the pure-Go backends (cmd/pytorchref/grpo_compare.sh).
// The notebooks execute into a temporary folder with a temporary result store: the committed notebooks and the
// user's store are not touched.
//
//	go run ./cmd/bench                  # the whole chapter (about 20 minutes on 2 cores, on XLA)
//	go run ./cmd/bench -sections 12.6   # one notebook: a quick check of the command
//	go run ./cmd/bench -torch=false     # without the PyTorch comparison
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/notebooks/harness"
	"github.com/agentrl-go/agentrl/store"
)

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: go run ./cmd/bench [flags]

Measures, in one run: the chapter (or -sections) executed through Jupyter from an empty result store and again with
every result stored, per notebook; the share of a default 40-step GRPO run spent on its graphs' first calls
(compilation), with the compiled-graph cache off and on, and its sampling's executed/needed token positions; and a GRPO step of the chapter's workload against PyTorch on both backends, where
Debian's python3-torch is installed. Nothing committed and nothing in the user's store is touched.

Flags:
`)
		flag.PrintDefaults()
	}
	sections := flag.String("sections", "", "comma-separated sections or names to execute (default: the whole chapter)")
	torch := flag.Bool("torch", true, "compare a GRPO step with PyTorch (cmd/pytorchref/grpo_compare.sh) when it is installed")
	shareRun := flag.Bool("share-run", false, "internal: train one default 40-step run in this process and print its compile share")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench: unexpected arguments %q (notebooks are chosen with -sections)\n", flag.Args())
		os.Exit(2)
	}
	if *shareRun {
		if err := compileShare(); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *sections, *torch)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, sections string, torch bool) error {
	eng, err := gomlxmodel.NewEngine(gomlxmodel.DefaultOptions())
	if err != nil {
		return err
	}
	numerics := eng.NumericsKey()
	dir, err := os.MkdirTemp("", "agentrl-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The kernel and every cell program inherit this environment: an empty store, and in it an empty graph cache.
	if err := os.Setenv(store.Env, filepath.Join(dir, "store")); err != nil {
		return err
	}
	paths, err := harness.Chapter("notebooks")
	if err != nil {
		return fmt.Errorf("%w (run from the repository root)", err)
	}
	if paths, err = harness.Select(paths, sections); err != nil {
		return err
	}
	r, err := harness.NewRunner()
	if err != nil {
		return err
	}
	fmt.Printf("bench %s | %s | %d cores\n", time.Now().Format("2006-01-02"), numerics, runtime.NumCPU())
	var totals [2]time.Duration
	times := make([][2]time.Duration, len(paths))
	for pass, name := range []string{"cold", "warm"} {
		for i, p := range paths {
			fmt.Fprintf(os.Stderr, "bench: %s %s\n", name, filepath.Base(p))
			start := time.Now()
			if err := r.Execute(ctx, p, filepath.Join(dir, name+"-"+filepath.Base(p))); err != nil {
				return err
			}
			times[i][pass] = time.Since(start)
			totals[pass] += times[i][pass]
		}
	}
	fmt.Printf("%-42s | %8s | %8s\n", "notebook", "cold", "warm")
	for i, p := range paths {
		fmt.Printf("%-42s | %7.1fs | %7.1fs\n", filepath.Base(p), times[i][0].Seconds(), times[i][1].Seconds())
	}
	fmt.Printf("%-42s | %7.1fs | %7.1fs\n", "chapter", totals[0].Seconds(), totals[1].Seconds())
	var cold []string
	for _, p := range paths {
		cold = append(cold, filepath.Join(dir, "cold-"+filepath.Base(p)))
	}
	kinds, err := coldProfile(cold)
	if err != nil {
		return err
	}
	printProfile(os.Stdout, kinds, totals[0])
	for _, cache := range []string{"off", "on"} {
		if err := shareOf(ctx, cache); err != nil {
			return err
		}
	}
	if torch {
		return torchRatios(ctx)
	}
	return nil
}

// shareOf runs this command again as -share-run with the compiled-graph cache off or on (a new process: every
// graph is compiled, or loaded from the cache the notebooks filled).
func shareOf(ctx context.Context, cache string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self, "-share-run")
	cmd.Env = append(os.Environ(), gomlxmodel.XLACacheEnv+"="+cache)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("the compile-share run (cache %s): %w", cache, err)
	}
	fmt.Printf("default 40-step run, compiled-graph cache %-3s | %s", cache, out)
	return nil
}

// compileShare trains a default 40-step run from the base agent (made, or loaded from the store) and prints its
// time, the share of it that went to the first calls of its graphs (compilation, or loading a compiled graph), and
// the token positions its decoders executed (graph rows × token slots) against those it needed (tokens fed).
func compileShare() error {
	ch, base, err := chapterBase()
	if err != nil {
		return err
	}
	policy, err := base.Clone()
	if err != nil {
		return err
	}
	n0, d0 := base.Engine().CompileStats()
	e0, f0 := base.Engine().DecodePositions()
	u0, v0 := base.Engine().UpdatePositions()
	start := time.Now()
	if _, err := agentrl.TrainRL(policy, ch.Train, ch.Tok, agentrl.DefaultRLConfig(), 40, nil); err != nil {
		return err
	}
	total := time.Since(start)
	n, d := base.Engine().CompileStats()
	e, f := base.Engine().DecodePositions()
	u, v := base.Engine().UpdatePositions()
	fmt.Printf("%.1fs, of which %d graphs' first calls %.1fs (%.0f%%); executed/needed token positions: sampling %d/%d (%.2f×), updates %d/%d (%.2f×)\n",
		total.Seconds(), n-n0, (d - d0).Seconds(), 100*(d-d0).Seconds()/total.Seconds(), e-e0, f-f0,
		ratio(e-e0, f-f0), u-u0, v-v0, ratio(u-u0, v-v0))
	return nil
}

// chapterBase returns the chapter's tokenizer, tasks and store, as a notebook's first cell has them, and its base
// agent (made, or loaded from the store).
func chapterBase() (*ch12.Chapter, *gomlxmodel.Model, error) {
	ch, err := ch12.Setup()
	if err != nil {
		return nil, nil, err
	}
	base, err := ch.Base()
	return ch, base, err
}

// ratio is executed/needed token positions (needed at least 1).
func ratio(executed, needed int64) float64 { return float64(executed) / float64(max(needed, 1)) }

// torchRatios runs grpo_compare.sh on both backends and prints its tables, or says why it cannot. The base agent
// is the one the notebooks stored.
func torchRatios(ctx context.Context) error {
	const python = "/usr/bin/python3"
	if err := exec.CommandContext(ctx, python, "-c", "import torch").Run(); err != nil {
		fmt.Println("GRPO step against PyTorch: skipped, PyTorch is not installed for " + python +
			" (apt-get install python3-torch, then run this again)")
		return nil
	}
	for _, backend := range []string{"xla", "go"} {
		cmd := exec.CommandContext(ctx, "cmd/pytorchref/grpo_compare.sh")
		cmd.Env = append(os.Environ(), "GOMLX_BACKEND="+backend)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("grpo_compare.sh on %s: %w", backend, err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() { // its table: seconds per step, the Go/PyTorch ratios, each side's workload and positions
			fmt.Printf("GRPO step on %-3s | %s\n", backend, sc.Text())
		}
	}
	return nil
}
