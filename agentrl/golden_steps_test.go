package agentrl

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/internal/golden"
)

// TestGoldenGRPOSteps: two GRPO steps of the default RLConfig on 4 tasks × 4 episodes from a fresh seeded
// TinyAgent (each: SampleStep, Collate, group advantages, RLUpdate) produce the bytes whose SHA-256 digest
// testdata/golden.json records for this process's gomlxmodel.Numerics: the collated batches (token ids, action
// masks, sampling log-probabilities, rewards), the updates' statistics and the policy's bytes after them. A process
// of other numerics logs its digest instead.
func TestGoldenGRPOSteps(t *testing.T) {
	numerics, err := gomlxmodel.Numerics()
	if err != nil {
		t.Fatal(err)
	}
	all, err := MakeTasks(SplitAll)
	if err != nil {
		t.Fatal(err)
	}
	train, err := MakeTasks(SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	tok := BuildTokenizer(all)
	policy, err := gomlxmodel.New(gomlxmodel.DefaultConfig(tok.VocabSize()), 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize = 4, 4
	rng := NewRNG(cfg.Seed)
	h := sha256.New()
	put := func(x any) { _ = binary.Write(h, binary.LittleEndian, x) }
	for range 2 {
		trajs, _, err := SampleStep(policy, nil, train, tok, cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		batch := Collate(trajs, tok.PadID)
		t.Logf("batch of %d episodes × %d tokens", batch.B, batch.T)
		put(int64(batch.B))
		put(int64(batch.T))
		put(batch.IDs)
		put(batch.ActionMask)
		put(batch.Logp)
		put(batch.Rewards)
		adv := BroadcastAdvantages(ComputeAdvantages(batch.Rewards, cfg.GroupSize), batch.Mask())
		st, err := RLUpdate(policy, batch, adv, cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		put([]uint64{math.Float64bits(st.Loss), math.Float64bits(st.ClipFrac), math.Float64bits(st.ApproxKL)})
	}
	if _, err := policy.WriteTo(h); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/golden.json", numerics, "grpo-steps", fmt.Sprintf("%x", h.Sum(nil)))
}
