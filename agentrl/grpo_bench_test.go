package agentrl

import (
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// BenchmarkGRPOStep times one step of TrainRL with the default RLConfig (8 tasks × 8 episodes, 6 turns,
// temperature 1, token_mean PPO, one Adam step with grad-norm clip 1; the learning rate does not change the work) on the 20 training tasks, from a
// fresh seeded TinyAgent (DefaultConfig). One untimed step first compiles the graphs; each iteration is then one
// more step of the same run: SampleStep (64 episodes, lockstep KV-cache sampling), then Collate,
// ComputeAdvantages and RLUpdate. internal/pytorchref/grpo_bench.py is the PyTorch port of the same step and
// grpo_compare.sh runs both.
//
// Metrics per step: sample-s and update-s (wall), sample-cpu-s and update-cpu-s (process CPU, all threads),
// tokens (all episodes), tokens/episode, and decode-steps (Decoder.Step calls of the rollout: each samples one
// token for every unfinished episode, so it is the most policy tokens of any episode).
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
	policy, err := gomlxmodel.New(gomlxmodel.DefaultConfig(tok.VocabSize()), 1)
	if err != nil {
		b.Fatal(err)
	}
	cfg := DefaultRLConfig()
	rng := NewRNG(cfg.Seed)
	var sampleS, updateS, sampleCPU, updateCPU float64
	var tokens, steps, episodes int
	step := func() {
		t0, c0 := time.Now(), cpuSeconds()
		trajs, _, err := SampleStep(policy, nil, train, tok, cfg, rng)
		if err != nil {
			b.Fatal(err)
		}
		t1, c1 := time.Now(), cpuSeconds()
		batch := Collate(trajs, tok.PadID)
		adv := ComputeAdvantages(batch.Rewards, cfg.GroupSize)
		if _, err := RLUpdate(policy, batch, BroadcastAdvantages(adv, Rows(batch.ActionMask, batch.T-1)), cfg, rng); err != nil {
			b.Fatal(err)
		}
		sampleS, sampleCPU = sampleS+t1.Sub(t0).Seconds(), sampleCPU+c1-c0
		updateS, updateCPU = updateS+time.Since(t1).Seconds(), updateCPU+cpuSeconds()-c1
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
	b.ResetTimer()
	for range b.N {
		step()
	}
	n := float64(b.N)
	b.ReportMetric(sampleS/n, "sample-s/op")
	b.ReportMetric(updateS/n, "update-s/op")
	b.ReportMetric(sampleCPU/n, "sample-cpu-s/op")
	b.ReportMetric(updateCPU/n, "update-cpu-s/op")
	b.ReportMetric(float64(tokens)/n, "tokens/op")
	b.ReportMetric(float64(tokens)/float64(episodes), "tokens/episode")
	b.ReportMetric(float64(steps)/n, "decode-steps/op")
}
