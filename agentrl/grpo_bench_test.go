package agentrl

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// Flags of BenchmarkGRPOStep (go test ./agentrl -run '^$' -bench GRPOStep -args -grpo.policy FILE ...).
var (
	grpoPolicy = flag.String("grpo.policy", "", "BenchmarkGRPOStep starts from the TinyAgent stream in this file "+
		"(Model.WriteTo; cmd/pytorchref/dumpgym -policy writes the chapter's RL base agent) instead of a fresh model")
)

// BenchmarkGRPOStep times one step of TrainRL with the default RLConfig (8 tasks × 8 episodes, 6 turns,
// temperature 1, token_mean PPO, one Adam step with grad-norm clip 1) on the 20 training tasks, from a fresh
// seeded TinyAgent (DefaultConfig) or, given -grpo.policy, from that model with a fresh Adam: the chapter's
// workload when it is the chapter's RL base agent. One untimed step first compiles the graphs; each iteration is
// then one more step of the same run: SampleStep (64 episodes, lockstep KV-cache sampling), then Collate,
// ComputeAdvantages and RLUpdate. cmd/pytorchref/grpo_bench.py is the PyTorch port of the same step and
// grpo_compare.sh runs both. -grpo.decoder and -grpo.packing select gomlxmodel's decoder schedule and update
// layout.
//
// Metrics per step: sample-s and update-s (wall), sample-cpu-s and update-cpu-s (process CPU, all threads),
// tokens (all episodes), tokens/episode, decode-steps (Decoder.Step calls of the rollout: each samples one token
// for every unfinished episode, so it is the most policy tokens of any episode), and the token positions that
// sampling and the update executed and needed (sample-executed, sample-needed: Engine.DecodePositions;
// update-executed, update-needed: Engine.UpdatePositions), and the graphs that the timed steps called for the
// first time (new shapes: compiled, or loaded from the compiled-graph cache) and the seconds those first calls took
// (first-calls, first-call-s: Engine.CompileStats), which the step times include.
func BenchmarkGRPOStep(b *testing.B) {
	if testing.Short() {
		b.Skip("GRPO step benchmark skipped under -short")
	}
	all, err := MakeTasks(SplitAll)
	if err != nil {
		b.Fatal(err)
	}
	train, err := MakeTasks(SplitTrain)
	if err != nil {
		b.Fatal(err)
	}
	tok := BuildTokenizer(all)
	policy, err := grpoBenchPolicy(tok.VocabSize())
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultRLConfig()
	rng := NewRNG(cfg.Seed)
	var sampleS, updateS, sampleCPU, updateCPU float64
	var tokens, steps, episodes int
	var sampleExec, sampleNeed, updateExec, updateNeed int64
	step := func() {
		t0, c0 := time.Now(), cpuSeconds()
		se0, sn0 := testEngine().DecodePositions()
		trajs, _, err := SampleStep(policy, nil, train, tok, cfg, rng)
		if err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), cpuSeconds()
		se1, sn1 := testEngine().DecodePositions()
		ue0, un0 := testEngine().UpdatePositions()
		batch := Collate(trajs, tok.PadID)
		adv := ComputeAdvantages(batch.Rewards, cfg.GroupSize)
		if _, err := RLUpdate(policy, batch, BroadcastAdvantages(adv, Rows(batch.ActionMask, batch.T-1)), cfg, rng); err != nil {
			b.Fatal(err)
		}
		sampleS, sampleCPU = sampleS+t1.Sub(t0).Seconds(), sampleCPU+c1-c0
		updateS, updateCPU = updateS+time.Since(t1).Seconds(), updateCPU+cpuSeconds()-c1
		ue1, un1 := testEngine().UpdatePositions()
		sampleExec, sampleNeed = sampleExec+se1-se0, sampleNeed+sn1-sn0
		updateExec, updateNeed = updateExec+ue1-ue0, updateNeed+un1-un0
		longest := 0
		for _, t := range trajs {
			tokens += len(t.IDs)
			policyTokens := 0
			for _, o := range t.Owner {
				if o == OwnerPolicy {
					policyTokens++
				}
			}
			longest = max(longest, policyTokens)
		}
		steps += longest
		episodes += len(trajs)
	}
	step() // warm-up: compiles the decode and update graphs
	sampleS, updateS, sampleCPU, updateCPU, tokens, steps, episodes = 0, 0, 0, 0, 0, 0, 0
	sampleExec, sampleNeed, updateExec, updateNeed = 0, 0, 0, 0
	g0, d0 := testEngine().CompileStats()
	b.ResetTimer()
	for range b.N {
		step()
	}
	n := float64(b.N)
	g1, d1 := testEngine().CompileStats()
	b.ReportMetric(float64(g1-g0)/n, "first-calls/op")
	b.ReportMetric((d1-d0).Seconds()/n, "first-call-s/op")
	b.ReportMetric(sampleS/n, "sample-s/op")
	b.ReportMetric(updateS/n, "update-s/op")
	b.ReportMetric(sampleCPU/n, "sample-cpu-s/op")
	b.ReportMetric(updateCPU/n, "update-cpu-s/op")
	b.ReportMetric(float64(tokens)/n, "tokens/op")
	b.ReportMetric(float64(tokens)/float64(episodes), "tokens/episode")
	b.ReportMetric(float64(steps)/n, "decode-steps/op")
	b.ReportMetric(float64(sampleExec)/n, "sample-executed/op")
	b.ReportMetric(float64(sampleNeed)/n, "sample-needed/op")
	b.ReportMetric(float64(updateExec)/n, "update-executed/op")
	b.ReportMetric(float64(updateNeed)/n, "update-needed/op")
}

// grpoBenchPolicy is BenchmarkGRPOStep's starting model: -grpo.policy's with a fresh Adam, else a fresh seeded
// TinyAgent for a vocabulary of vocab words.
func grpoBenchPolicy(vocab int) (*gomlxmodel.Model, error) {
	if *grpoPolicy == "" {
		return gomlxmodel.New(testEngine(), gomlxmodel.DefaultConfig(vocab), 1)
	}
	f, err := os.Open(*grpoPolicy)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := gomlxmodel.ReadModel(testEngine(), f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", *grpoPolicy, err)
	}
	if got := m.Config().Vocab; got != vocab {
		return nil, fmt.Errorf("%s: a model of %d words, the tokenizer has %d", *grpoPolicy, got, vocab)
	}
	m.ResetOptimizer()
	return m, nil
}
