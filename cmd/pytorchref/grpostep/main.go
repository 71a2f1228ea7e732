// Command grpostep times the steps of agentrl's GRPO training (TrainRL with DefaultRLConfig) from a TinyAgent
// stream, the first step included: the same step as agentrl's BenchmarkGRPOStep (SampleStep: 64 episodes of up
// to 6 turns with lockstep KV-cache sampling; Collate, ComputeAdvantages, RLUpdate), on the 20 training tasks,
// from the model in -policy (dumpgym -policy writes the chapter's RL base agent) with a fresh Adam, or from a
// fresh seeded TinyAgent. Where BenchmarkGRPOStep leaves its first, compiling step untimed, grpostep reports it:
// it is what a cold process pays, and what jax_grpo_bench.py's first step is compared with.
//
// The engine is gomlxmodel.NewEngine(gomlxmodel.EnvOptions()), as the benchmark's: GOMLX_BACKEND, the installed
// PJRT plugin, and XLA's executable cache where AGENTRL_XLA_CACHE_DIR or AGENTRL_CACHE names a folder
// (AGENTRL_XLA_CACHE=off turns it off, so every new shape compiles).
//
//	go run ./cmd/pytorchref/grpostep -policy base.tinyagent -steps 5
//
// It prints one line per step on stderr and on stdout one "RESULT key=value ..." line with jax_grpo_bench.py's
// keys: per-step means over the steps after the first (sample_s, update_s, sample_cpu_s, update_cpu_s, tokens,
// decode_steps, sample_executed, sample_needed, update_executed, update_needed, tokens_per_episode), traces and
// compile_s (graphs first called per step, compiled or loaded from the cache, and the seconds those calls took:
// Engine.CompileStats), the same per part (sample_traces, sample_compile_s, update_traces, update_compile_s), the
// first step's first_sample_s, first_update_s, first_traces, first_compile_s and the same per part (first_ before
// each), and shapes (graphs first called in all).
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

func main() {
	policyPath := flag.String("policy", "", "start from this TinyAgent stream (dumpgym -policy) instead of a fresh model")
	steps := flag.Int("steps", 5, "steps after the first")
	flag.Parse()
	if err := run(*policyPath, *steps); err != nil {
		log.Fatal(err)
	}
}

// measure is one step's measurements.
type measure struct {
	sampleS, updateS, sampleCPU, updateCPU float64
	tokens, episodes, decodeSteps          int
	sampleExec, sampleNeed                 int64
	updateExec, updateNeed                 int64
	graphs, sampleGraphs                   int
	compileS, sampleCompileS               float64
}

func run(policyPath string, steps int) error {
	b, err := newBench(policyPath)
	if err != nil {
		return err
	}
	var first, sum measure
	for i := 0; i <= steps; i++ {
		m, err := b.step()
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "step %d: sample %.3fs (cpu %.3fs) update %.3fs (cpu %.3fs) tokens %d decode steps %d, %d graphs first called (%.3fs)\n",
			i, m.sampleS, m.sampleCPU, m.updateS, m.updateCPU, m.tokens, m.decodeSteps, m.graphs, m.compileS)
		if i == 0 {
			first = m
		} else {
			sum.add(m)
		}
	}
	shapes, _ := b.eng.CompileStats()
	fmt.Println(result(first, sum, float64(max(steps, 1)), shapes))
	return nil
}

// bench is one GRPO training run's state: the engine, the policy and what its steps sample from.
type bench struct {
	eng    *gomlxmodel.Engine
	policy *gomlxmodel.Model
	train  []agentrl.Task
	tok    *agentrl.Tokenizer
	cfg    agentrl.RLConfig
	rng    *rand.Rand
}

// newBench makes the engine from the environment, the chapter's tasks and tokenizer, and the starting policy.
func newBench(policyPath string) (*bench, error) {
	eng, err := gomlxmodel.NewEngine(gomlxmodel.EnvOptions())
	if err != nil {
		return nil, err
	}
	all, err := agentrl.MakeTasks(agentrl.SplitAll)
	if err != nil {
		return nil, err
	}
	train, err := agentrl.MakeTasks(agentrl.SplitTrain)
	if err != nil {
		return nil, err
	}
	tok := agentrl.BuildTokenizer(all)
	policy, err := readPolicy(eng, policyPath, tok.VocabSize())
	if err != nil {
		return nil, err
	}
	cfg := agentrl.DefaultRLConfig()
	return &bench{eng: eng, policy: policy, train: train, tok: tok, cfg: cfg, rng: agentrl.NewRNG(cfg.Seed)}, nil
}

// step runs one GRPO step and measures it.
func (b *bench) step() (measure, error) {
	var m measure
	g0, d0 := b.eng.CompileStats()
	se0, sn0 := b.eng.DecodePositions()
	ue0, un0 := b.eng.UpdatePositions()
	t0, c0 := time.Now(), cpuSeconds()
	trajs, _, err := agentrl.SampleStep(b.policy, nil, b.train, b.tok, b.cfg, b.rng)
	if err != nil {
		return m, err
	}
	t1, c1 := time.Now(), cpuSeconds()
	gs, ds := b.eng.CompileStats()
	m.sampleGraphs, m.sampleCompileS = gs-g0, (ds - d0).Seconds()
	batch := agentrl.Collate(trajs, b.tok.PadID)
	adv := agentrl.ComputeAdvantages(batch.Rewards, b.cfg.GroupSize)
	if _, err := agentrl.RLUpdate(b.policy, batch, agentrl.BroadcastAdvantages(adv, agentrl.Rows(batch.ActionMask, batch.T-1)), b.cfg, b.rng); err != nil {
		return m, err
	}
	m.sampleS, m.sampleCPU = t1.Sub(t0).Seconds(), c1-c0
	m.updateS, m.updateCPU = time.Since(t1).Seconds(), cpuSeconds()-c1
	se1, sn1 := b.eng.DecodePositions()
	ue1, un1 := b.eng.UpdatePositions()
	g1, d1 := b.eng.CompileStats()
	m.sampleExec, m.sampleNeed = se1-se0, sn1-sn0
	m.updateExec, m.updateNeed = ue1-ue0, un1-un0
	m.graphs, m.compileS = g1-g0, (d1 - d0).Seconds()
	for _, t := range trajs {
		m.tokens += len(t.IDs)
		policyTokens := 0
		for _, o := range t.Owner {
			if o == agentrl.OwnerPolicy {
				policyTokens++
			}
		}
		m.decodeSteps = max(m.decodeSteps, policyTokens)
	}
	m.episodes = len(trajs)
	return m, nil
}

// add adds o's measurements to m's.
func (m *measure) add(o measure) {
	m.sampleS, m.updateS = m.sampleS+o.sampleS, m.updateS+o.updateS
	m.sampleCPU, m.updateCPU = m.sampleCPU+o.sampleCPU, m.updateCPU+o.updateCPU
	m.tokens, m.episodes, m.decodeSteps = m.tokens+o.tokens, m.episodes+o.episodes, m.decodeSteps+o.decodeSteps
	m.sampleExec, m.sampleNeed = m.sampleExec+o.sampleExec, m.sampleNeed+o.sampleNeed
	m.updateExec, m.updateNeed = m.updateExec+o.updateExec, m.updateNeed+o.updateNeed
	m.graphs, m.compileS = m.graphs+o.graphs, m.compileS+o.compileS
	m.sampleGraphs, m.sampleCompileS = m.sampleGraphs+o.sampleGraphs, m.sampleCompileS+o.sampleCompileS
}

// result is the RESULT line: sum's means over n steps, first's values, and the shapes compiled in all.
func result(first, sum measure, n float64, shapes int) string {
	kv := []struct {
		k string
		v float64
	}{
		{"sample_s", sum.sampleS / n}, {"update_s", sum.updateS / n},
		{"sample_cpu_s", sum.sampleCPU / n}, {"update_cpu_s", sum.updateCPU / n},
		{"tokens", float64(sum.tokens) / n}, {"decode_steps", float64(sum.decodeSteps) / n},
		{"sample_executed", float64(sum.sampleExec) / n}, {"sample_needed", float64(sum.sampleNeed) / n},
		{"update_executed", float64(sum.updateExec) / n}, {"update_needed", float64(sum.updateNeed) / n},
		{"traces", float64(sum.graphs) / n}, {"compile_s", sum.compileS / n},
		{"sample_traces", float64(sum.sampleGraphs) / n}, {"sample_compile_s", sum.sampleCompileS / n},
		{"update_traces", float64(sum.graphs-sum.sampleGraphs) / n}, {"update_compile_s", (sum.compileS - sum.sampleCompileS) / n},
		{"tokens_per_episode", float64(sum.tokens) / float64(max(sum.episodes, 1))},
		{"first_sample_s", first.sampleS}, {"first_update_s", first.updateS},
		{"first_traces", float64(first.graphs)}, {"first_compile_s", first.compileS},
		{"first_sample_traces", float64(first.sampleGraphs)}, {"first_sample_compile_s", first.sampleCompileS},
		{"first_update_traces", float64(first.graphs - first.sampleGraphs)}, {"first_update_compile_s", first.compileS - first.sampleCompileS},
		{"shapes", float64(shapes)},
	}
	var b strings.Builder
	b.WriteString("RESULT")
	for _, e := range kv {
		fmt.Fprintf(&b, " %s=%.4f", e.k, e.v)
	}
	return b.String()
}

// readPolicy is the starting model: the stream at path with a fresh Adam, else a fresh seeded TinyAgent.
func readPolicy(eng *gomlxmodel.Engine, path string, vocab int) (*gomlxmodel.Model, error) {
	if path == "" {
		return gomlxmodel.New(eng, gomlxmodel.DefaultConfig(vocab), 1)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := gomlxmodel.ReadModel(eng, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if got := m.Config().Vocab; got != vocab {
		return nil, fmt.Errorf("%s: a model of %d words, the tokenizer has %d", path, got, vocab)
	}
	m.ResetOptimizer()
	return m, nil
}
