package agentrl

import (
	"math"
	"strconv"
	"testing"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// samplerWorkload is the chapter's sampling workload on a fresh seeded TinyAgent: the training tasks, the
// default RLConfig's 8 tasks × 8 episodes (4 × 4 under -short), each a lockstep batch whose rows prefill
// prompts and observations of different lengths while others decode.
func samplerWorkload(t testing.TB) (*gomlxmodel.Model, []Task, *Tokenizer, RLConfig) {
	t.Helper()
	all, err := MakeTasks(SplitAll)
	if err != nil {
		t.Fatal(err)
	}
	train, err := MakeTasks(SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	tok := BuildTokenizer(all)
	policy, err := gomlxmodel.New(testEngine(), gomlxmodel.DefaultConfig(tok.VocabSize()), 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRLConfig()
	if testing.Short() {
		cfg.PromptsPerStep, cfg.GroupSize = 4, 4
	}
	return policy, train, tok, cfg
}

// sampleWith samples steps training steps' episodes (SampleStep) from cfg.Seed, and returns the trajectories and
// the decoders' executed and needed token positions.
func sampleWith(t testing.TB, steps int, policy *gomlxmodel.Model, train []Task, tok *Tokenizer,
	cfg RLConfig) ([][]Trajectory, int64, int64) {
	t.Helper()
	rng := NewRNG(cfg.Seed)
	e0, n0 := testEngine().DecodePositions()
	var out [][]Trajectory
	for range steps {
		trajs, _, err := SampleStep(policy, nil, train, tok, cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, trajs)
	}
	e1, n1 := testEngine().DecodePositions()
	return out, e1 - e0, n1 - n0
}

// TestSamplerPositions: the sampler samples the same episodes, bit for bit, twice from one seed, and its decoders
// (the split: decoding rows apart from prefilling ones, in few shapes) execute at most 1.6 token positions per token
// fed over two steps of the chapter's workload on the real gym. Run it on both backends (GOMLX_BACKEND=go for pure
// Go); gomlxmodel's TestDecoderScheduleBits checks the split's logits against the padded graph.
func TestSamplerPositions(t *testing.T) {
	policy, train, tok, cfg := samplerWorkload(t)
	a, e, n := sampleWith(t, 2, policy, train, tok, cfg)
	b, _, _ := sampleWith(t, 2, policy, train, tok, cfg)
	if d := diffTrajectories(a, b); d != "" {
		t.Errorf("two samplings from one seed differ: %s", d)
	}
	t.Logf("token positions executed/needed: %d/%d (%.2f×)", e, n, float64(e)/float64(n))
	if float64(e)/float64(n) > 1.6 {
		t.Errorf("the sampler executed %.2f× the token positions it needed, want at most 1.6×", float64(e)/float64(n))
	}
}

// pureGo reports whether the models run on the pure-Go backend.
func pureGo() bool {
	return testEngine().Numerics().Arch != "" // pure Go names its architecture, XLA its processor
}

// diffTrajectories describes the first difference between two runs' trajectories (token ids, owners, and the
// bits of the sampling log-probabilities) and counts the log-probabilities that differ; "" when identical.
func diffTrajectories(a, b [][]Trajectory) string {
	first, nIDs, nLogp, total := "", 0, 0, 0
	note := func(s string) {
		if first == "" {
			first = s
		}
	}
	for s := range a {
		for e := range a[s] {
			x, y := a[s][e], b[s][e]
			if len(x.IDs) != len(y.IDs) {
				nIDs++
				note("step " + itoa(s) + " episode " + itoa(e) + ": lengths differ")
				continue
			}
			for j := range x.IDs {
				if x.IDs[j] != y.IDs[j] || x.Owner[j] != y.Owner[j] {
					nIDs++
					note("step " + itoa(s) + " episode " + itoa(e) + ": token ids differ")
					break
				}
			}
			for j := range min(len(x.Logp), len(y.Logp)) {
				total++
				if math.Float32bits(x.Logp[j]) != math.Float32bits(y.Logp[j]) {
					nLogp++
					note("step " + itoa(s) + " episode " + itoa(e) + ": log-probability bits differ")
				}
			}
		}
	}
	if first == "" {
		return ""
	}
	return first + " (" + itoa(nIDs) + " episodes with other tokens, " + itoa(nLogp) + " of " + itoa(total) +
		" log-probability positions with other bits)"
}

func itoa(n int) string { return strconv.Itoa(n) }
