package gomlxmodel_test

import (
	"fmt"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// A TinyAgent on the engine the environment asks for: one PPO step, then incremental decoding with a KV cache
// whose logits equal the full forward pass.
func Example() {
	eng, err := gomlxmodel.NewEngine(gomlxmodel.EnvOptions())
	if err != nil {
		panic(err)
	}
	m, err := gomlxmodel.New(eng, gomlxmodel.Config{Vocab: 20, MaxLen: 32, DModel: 16, Heads: 2, Layers: 2, MLP: 32}, 0)
	if err != nil {
		panic(err)
	}
	ids := []int32{1, 5, 7, 2, 1, 4, 4, 2} // two rows of four tokens
	batch := gomlxmodel.UpdateBatch{B: 2, T: 4, IDs: ids,
		Mask:    []float32{0, 1, 1, 0, 1, 1},
		OldLogp: []float32{0, -3, -3, 0, -3, -3},
		Adv:     []float32{1, 1, 1, -1, -1, -1}}
	lc := gomlxmodel.LossConfig{Kind: gomlxmodel.LossPPO, ClipEps: 0.2, Aggregation: "token_mean", LR: 1e-3, MaxGradNorm: 1}
	if _, err := m.Update(batch, lc); err != nil {
		panic(err)
	}

	d, err := m.NewDecoder(1)
	if err != nil {
		panic(err)
	}
	d.Feed(0, ids[:3]) // prefill
	if _, err := d.Step(); err != nil {
		panic(err)
	}
	d.Feed(0, ids[3:4]) // the sampled token
	next, err := d.Step()
	if err != nil {
		panic(err)
	}
	full, err := m.Logits(ids[:4], 1, 4)
	if err != nil {
		panic(err)
	}
	diff := 0.0
	for v, x := range next {
		diff = max(diff, float64(abs(x-full[3*20+v])))
	}
	fmt.Printf("params %d, steps %d, context %d, decoder matches forward: %v\n", m.NumParams(), m.Steps(), d.Len(0), diff <= 1e-5)
	// Output: params 5652, steps 1, context 4, decoder matches forward: true
}

func abs(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// Which weights carry what an update changed: put a group of the starting model's weights back into the updated
// copy and compare. With every weight back the copy is the starting model again.
func ExampleModel_CopyParams() {
	cfg := gomlxmodel.Config{Vocab: 20, MaxLen: 32, DModel: 16, Heads: 2, Layers: 2, MLP: 32}
	eng, err := gomlxmodel.NewEngine(gomlxmodel.EnvOptions())
	if err != nil {
		panic(err)
	}
	start, err := gomlxmodel.New(eng, cfg, 0)
	if err != nil {
		panic(err)
	}
	trained, err := start.Clone()
	if err != nil {
		panic(err)
	}
	ids := []int32{1, 5, 7, 2}
	batch := gomlxmodel.UpdateBatch{B: 1, T: 4, IDs: ids, Mask: []float32{1, 1, 1}, OldLogp: []float32{-3, -3, -3},
		Adv: []float32{1, 1, 1}}
	lc := gomlxmodel.LossConfig{Kind: gomlxmodel.LossReinforce, Aggregation: "token_mean", LR: 1e-2, MaxGradNorm: 1}
	if _, err := trained.Update(batch, lc); err != nil {
		panic(err)
	}
	logp := func(m *gomlxmodel.Model) float32 {
		lp, err := m.SequenceLogProbs(ids, 1, 4)
		if err != nil {
			panic(err)
		}
		return lp[0] + lp[1] + lp[2]
	}
	for _, group := range []struct {
		name string
		pick func(string) bool
	}{
		{"nothing", func(string) bool { return false }},
		{"everything", func(string) bool { return true }},
	} {
		probe, err := trained.Clone()
		if err != nil {
			panic(err)
		}
		copied, err := probe.CopyParams(start, group.pick)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-10s put back (%2d tensors): log p rose %v, equals the start %v\n", group.name, len(copied),
			logp(probe) > logp(start), logp(probe) == logp(start))
	}
	// Output:
	// nothing    put back ( 0 tensors): log p rose true, equals the start false
	// everything put back (38 tensors): log p rose false, equals the start true
}
