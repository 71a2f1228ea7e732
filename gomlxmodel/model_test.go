package gomlxmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// tinyConfig is the unit-test model: vocab 20, d 16, 2 heads, 2 layers, 32 positions.
func tinyConfig() Config {
	return Config{Vocab: 20, MaxLen: 32, DModel: 16, Heads: 2, Layers: 2, MLP: 32}
}

func randomIDs(rng *rand.Rand, n, vocab int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(rng.IntN(vocab))
	}
	return ids
}

func mustNew(t testing.TB, cfg Config, seed int64) *Model {
	t.Helper()
	m, err := New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDefaultConfigSize(t *testing.T) {
	for _, tc := range []struct{ vocab, want int }{{126, 157950}, {150, 161046}} {
		m := mustNew(t, DefaultConfig(tc.vocab), 0)
		if got := m.NumParams(); got != tc.want {
			t.Errorf("vocab %d: %d parameters, want %d", tc.vocab, got, tc.want)
		}
	}
}

// TestLogProbsMatchLogits checks SequenceLogProbs against a log-softmax of Logits on the host, and
// that padding (bucketing of B and T) changes nothing.
func TestLogProbsMatchLogits(t *testing.T) {
	cfg := tinyConfig()
	m := mustNew(t, cfg, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	B, T, V := 3, 7, cfg.Vocab
	ids := randomIDs(rng, B*T, V)
	logits, err := m.Logits(ids, B, T)
	if err != nil {
		t.Fatal(err)
	}
	logp, err := m.SequenceLogProbs(ids, B, T)
	if err != nil {
		t.Fatal(err)
	}
	for b := range B {
		for j := range T - 1 {
			row := logits[(b*T+j)*V : (b*T+j+1)*V]
			mx := math.Inf(-1)
			for _, x := range row {
				mx = math.Max(mx, float64(x))
			}
			s := 0.0
			for _, x := range row {
				s += math.Exp(float64(x) - mx)
			}
			want := float64(row[ids[b*T+j+1]]) - mx - math.Log(s)
			if got := float64(logp[b*(T-1)+j]); math.Abs(got-want) > 1e-5 {
				t.Fatalf("logp[%d,%d] = %g, want %g", b, j, got, want)
			}
		}
	}
	// Row 0 alone (another bucket of B) and a prefix (causality) give the same logits.
	alone, err := m.Logits(ids[:T], 1, T)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range alone {
		if d := math.Abs(float64(x - logits[i])); d > 1e-5 {
			t.Fatalf("row 0 alone: logit %d differs by %g", i, d)
		}
	}
	prefix, err := m.Logits(ids[:4], 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range prefix {
		if d := math.Abs(float64(x - logits[i])); d > 1e-5 {
			t.Fatalf("prefix: logit %d differs by %g", i, d)
		}
	}
}

// TestZeroGradientOffPolicy is the book's first check at TinyAgent's real size: the REINFORCE
// gradient wrt the logits is exactly zero on every position outside the action mask and non-zero
// on every position inside it.
func TestZeroGradientOffPolicy(t *testing.T) {
	cfg := DefaultConfig(150)
	m := mustNew(t, cfg, 3)
	rng := rand.New(rand.NewPCG(3, 4))
	B, T := 4, 40
	ids := randomIDs(rng, B*T, cfg.Vocab)
	mask := make([]float32, B*(T-1))
	for i := range mask {
		if rng.IntN(3) == 0 {
			mask[i] = 1
		}
	}
	adv := []float32{1, -0.5, 2, -1}
	g, err := m.LogitGradAbsSum(ids, B, T, adv, mask)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range g {
		if mask[i] == 0 && x != 0 {
			t.Fatalf("position %d (mask 0): gradient %g, want exactly 0", i, x)
		}
		if mask[i] == 1 && !(x > 0) {
			t.Fatalf("position %d (mask 1): gradient %g, want > 0", i, x)
		}
	}
}

func makeBatch(rng *rand.Rand, cfg Config, B, T int) UpdateBatch {
	b := UpdateBatch{B: B, T: T, IDs: randomIDs(rng, B*T, cfg.Vocab)}
	for i := range B * (T - 1) {
		mask := float32(0)
		if rng.IntN(2) == 0 {
			mask = 1
		}
		b.Mask = append(b.Mask, mask)
		b.OldLogp = append(b.OldLogp, -float32(math.Log(float64(cfg.Vocab)))+0.1*float32(rng.NormFloat64()))
		b.Adv = append(b.Adv, float32(rng.NormFloat64()))
		_ = i
	}
	return b
}

// lossConfigs returns one loss configuration of each kind and aggregation, with learning rate lr.
func lossConfigs(lr float64) []LossConfig {
	return []LossConfig{
		{Kind: "ppo", ClipEps: 0.2, Aggregation: "token_mean", LR: lr, MaxGradNorm: 1},
		{Kind: "ppo", ClipEps: 0.2, Aggregation: "seq_mean_token_mean", LR: lr},
		{Kind: "reinforce", Aggregation: "token_mean", LR: lr, MaxGradNorm: 0.5},
	}
}

// TestUpdateReducesLoss runs several PPO and REINFORCE steps on a fixed batch and checks the loss
// goes down and the statistics are sane.
func TestUpdateReducesLoss(t *testing.T) {
	cfg := tinyConfig()
	for _, lc := range lossConfigs(3e-3) {
		t.Run(lc.Kind+"/"+lc.Aggregation, func(t *testing.T) {
			m := mustNew(t, cfg, 5)
			b := makeBatch(rand.New(rand.NewPCG(5, 6)), cfg, 5, 11)
			var first, last UpdateStats
			for i := range 8 {
				st, err := m.Update(b, lc)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = st
				}
				last = st
			}
			if !(last.Loss < first.Loss) {
				t.Errorf("loss %g -> %g, want a decrease", first.Loss, last.Loss)
			}
			if last.ClipFrac < 0 || last.ClipFrac > 1 || math.IsNaN(last.ApproxKL) {
				t.Errorf("stats %+v", last)
			}
			if m.Steps() != 8 {
				t.Errorf("Steps() = %d, want 8", m.Steps())
			}
		})
	}
}

func TestUpdateErrors(t *testing.T) {
	cfg := tinyConfig()
	m := mustNew(t, cfg, 5)
	b := makeBatch(rand.New(rand.NewPCG(5, 6)), cfg, 2, 5)
	for _, tc := range []struct {
		name string
		b    UpdateBatch
		lc   LossConfig
	}{
		{"kind", b, LossConfig{Kind: "a2c", Aggregation: "token_mean", LR: 1e-3}},
		{"aggregation", b, LossConfig{Kind: "reinforce", Aggregation: "sum", LR: 1e-3}},
		{"clip", b, LossConfig{Kind: "ppo", Aggregation: "token_mean", LR: 1e-3}},
		{"lr", b, LossConfig{Kind: "reinforce", Aggregation: "token_mean"}},
		{"mask length", UpdateBatch{B: 2, T: 5, IDs: b.IDs, Mask: b.Mask[:3], OldLogp: b.OldLogp, Adv: b.Adv},
			LossConfig{Kind: "reinforce", Aggregation: "token_mean", LR: 1e-3}},
		{"too long", UpdateBatch{B: 1, T: 40, IDs: make([]int32, 40)}, LossConfig{Kind: "reinforce", Aggregation: "token_mean", LR: 1e-3}},
	} {
		if _, err := m.Update(tc.b, tc.lc); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if m.Steps() != 0 {
		t.Errorf("failed updates changed the step count to %d", m.Steps())
	}
}
