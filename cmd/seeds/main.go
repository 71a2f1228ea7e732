// Command seeds repeats the chapter's seed-sensitive experiments under other RL seeds and reports, for each
// mechanism check of reproduction-targets.md that they decide, in how many seeds it holds. The book prints one
// seed; this tells a systematic difference between our port and the book (a check that fails under every seed)
// from the luck of one run (a check that fails under some).
//
//	go run ./cmd/seeds               # RL seeds 0-5 (seed 0 is the notebooks' run)
//	go run ./cmd/seeds -seeds 0,7    # other seeds
//	go run ./cmd/seeds -base-seed 2 -seeds 0,1,2   # another draw of the base agent (agentrl.BaseConfig.Seed)
//	go run ./cmd/seeds -reread 0.2   # a base agent whose demonstrations sometimes read twice (12.3)
//	go run ./cmd/seeds -mapping-right 0.8   # one whose reads lead to the right edit less often (12.3)
//	go run ./cmd/seeds -mapping-demos 2048  # one taught the read-to-edit mapping by fewer demonstrations
//	go run ./cmd/seeds -base-steps 325      # one trained for fewer steps, which has learned less of the mapping
//	go run ./cmd/seeds -minibatches 4 -lr 1.5e-4   # another RL update (agentrl.RLConfig)
//	go run ./cmd/seeds -kl 0.1       # a KL penalty towards the base agent (agentrl.RLConfig.KLCoef)
//
// First, and in seconds, it repeats §12.5's comparison of error observations with early termination (C25) under
// sampling seeds 0-9 (the notebook's is 2): the base agent's episodes on the training tasks in both environments.
//
// Per seed it trains the three credit arms of §12.2 (outcome GRPO, token GAE and turn GAE, with the 0.05 step
// cost), the default run (§12.3), the 3-turn arm and the 0.3-cost arm (§12.3) with the two remedies that §12.7
// runs on it (ours: 3 free calls, a cost ramped in), the never-submit run with and without its fix (§12.7, the fix
// ours to run: running out of turns scored −1), the keep_obs=1 policy (§12.4), and two default runs in which a
// malformed call costs reward (§12.5, ours: 0.1 per call, or the episode), about 4 minutes on XLA and 10 on the
// pure-Go backend; results go to the result store, so a second call is quick. The base agent and the warmed-up
// critic are the notebooks' ones (unless -base-seed, -reread, -mapping-right, -mapping-demos or
// -base-steps makes another base agent): only the RL generator's seed changes. The runs, their keys and their
// held-out evaluations are the chapter's (package ch12), so seed 0 loads what the notebooks stored. Each seed's
// report starts with its step-0 batch, the calibration gate's statistics.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
)

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: go run ./cmd/seeds [flags]

Repeats the chapter's seed-sensitive experiments under other RL seeds (the notebooks run seed 0) and reports, for
each mechanism check of the reproduction targets (testdata/reproduction-targets.md) that they decide, in how many
seeds it holds: a check that fails under every seed is a systematic difference between this port and the book, one
that fails under some is the luck of one run. It first repeats §12.5's error-observation comparison (C25) under
the sampling seeds, then trains §12.2's credit arms and §12.3's, §12.4's, §12.5's and §12.7's runs per RL seed
(minutes per seed; results go to the result store, so a second call is quick). The base-agent flags train another
base agent; with their defaults only the RL seed changes.

Flags:
`)
		flag.PrintDefaults()
	}
	seedList := flag.String("seeds", "0,1,2,3,4,5", "comma-separated RL seeds")
	samplingList := flag.String("sampling", "0,1,2,3,4,5,6,7,8,9", "comma-separated sampling seeds of the C25 comparison")
	baseSeed := flag.Uint64("base-seed", agentrl.DefaultBaseConfig().Seed, "seed of the base agent's demonstrations and training")
	reread := flag.Float64("reread", agentrl.DefaultBaseConfig().RereadProb, "chance that a reading demonstration reads twice (agentrl.BaseConfig.RereadProb)")
	mappingRight := flag.Float64("mapping-right", agentrl.DefaultBaseConfig().MappingRightProb, "chance that a mapping demonstration edits with the right op (agentrl.BaseConfig.MappingRightProb)")
	mappingDemos := flag.Int("mapping-demos", agentrl.DefaultBaseConfig().MappingDemos, "demonstrations that read, then edit (agentrl.BaseConfig.MappingDemos)")
	baseSteps := flag.Int("base-steps", agentrl.DefaultBaseConfig().Steps, "Adam steps of the base agent's supervised training (agentrl.BaseConfig.Steps)")
	rl := agentrl.DefaultRLConfig()
	flag.Float64Var(&rl.LR, "lr", rl.LR, "RL learning rate (agentrl.RLConfig.LR)")
	flag.IntVar(&rl.Minibatches, "minibatches", rl.Minibatches, "minibatches per RL update (agentrl.RLConfig.Minibatches)")
	flag.IntVar(&rl.Epochs, "epochs", rl.Epochs, "passes over each batch (agentrl.RLConfig.Epochs)")
	flag.Float64Var(&rl.KLCoef, "kl", rl.KLCoef, "KL penalty towards the base agent (agentrl.RLConfig.KLCoef)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "seeds: unexpected arguments %q (seeds are given with -seeds, e.g. -seeds 0,1)\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	seeds, err := parseSeeds(*seedList)
	if err != nil {
		fmt.Fprintln(os.Stderr, "seeds: -seeds:", err)
		os.Exit(2)
	}
	sampling, err := parseSeeds(*samplingList)
	if err != nil {
		fmt.Fprintln(os.Stderr, "seeds: -sampling:", err)
		os.Exit(2)
	}
	base := agentrl.DefaultBaseConfig()
	base.Seed, base.RereadProb, base.MappingRightProb, base.MappingDemos = *baseSeed, *reread, *mappingRight, *mappingDemos
	base.Steps = *baseSteps
	if err := errors.Join(rl.Validate(), base.Validate()); err != nil { // before minutes of training
		fmt.Fprintln(os.Stderr, "seeds:", err)
		os.Exit(2)
	}
	if err := run(base, rl, seeds, sampling); err != nil {
		fmt.Fprintln(os.Stderr, "seeds:", err)
		os.Exit(1)
	}
}

// parseSeeds parses a comma-separated list of seeds.
func parseSeeds(list string) ([]uint64, error) {
	var seeds []uint64
	for _, f := range strings.Split(list, ",") {
		s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad seed %q", f)
		}
		seeds = append(seeds, s)
	}
	return seeds, nil
}
