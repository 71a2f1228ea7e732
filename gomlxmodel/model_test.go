package gomlxmodel

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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
	m, err := New(testEng(), cfg, seed)
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
		t.Run(string(lc.Kind)+"/"+string(lc.Aggregation), func(t *testing.T) {
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

// TestCopyParams copies groups of one model's weights into another: copying all of them gives the source's logits,
// copying none changes nothing, the copied names are exactly the picked ones, and the Adam state is left alone.
func TestCopyParams(t *testing.T) {
	cfg := tinyConfig()
	src, dst := mustNew(t, cfg, 1), mustNew(t, cfg, 2)
	ids := randomIDs(rand.New(rand.NewPCG(7, 8)), 2*6, cfg.Vocab)
	logits := func(m *Model) []float32 {
		t.Helper()
		l, err := m.Logits(ids, 2, 6)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	want, before := logits(src), logits(dst)
	isMLP := func(name string) bool { return strings.HasSuffix(name, "/w1") || strings.HasSuffix(name, "/w2") }
	for _, tc := range []struct {
		name       string
		pick       func(string) bool
		copied     int
		equalsSrc  bool
		equalsSelf bool
	}{
		{"none", func(string) bool { return false }, 0, false, true},
		{"mlp weights", isMLP, 2 * cfg.Layers, false, false},
		{"all", func(string) bool { return true }, len(dst.ParamNames()), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := dst.Clone()
			if err != nil {
				t.Fatal(err)
			}
			steps := m.Steps()
			copied, err := m.CopyParams(src, tc.pick)
			if err != nil {
				t.Fatal(err)
			}
			if len(copied) != tc.copied {
				t.Errorf("copied %d parameters %v, want %d", len(copied), copied, tc.copied)
			}
			for _, name := range copied {
				if !tc.pick(name) {
					t.Errorf("copied %q, which was not picked", name)
				}
			}
			got := logits(m)
			if eq := slices.Equal(got, want); eq != tc.equalsSrc {
				t.Errorf("logits equal the source's: %v, want %v", eq, tc.equalsSrc)
			}
			if eq := slices.Equal(got, before); eq != tc.equalsSelf {
				t.Errorf("logits unchanged: %v, want %v", eq, tc.equalsSelf)
			}
			if m.Steps() != steps {
				t.Errorf("step count %d, want %d", m.Steps(), steps)
			}
		})
	}
	other := mustNew(t, Config{Vocab: 21, MaxLen: 32, DModel: 16, Heads: 2, Layers: 2, MLP: 32}, 1)
	if _, err := dst.CopyParams(other, func(string) bool { return true }); err == nil {
		t.Error("CopyParams from a model of another vocabulary: no error")
	}
	if copied, err := dst.CopyParams(dst, func(string) bool { return true }); err != nil || copied != nil {
		t.Errorf("CopyParams from itself = %v, %v; want nothing copied and no error", copied, err)
	}
}

func TestAggregationWeights(t *testing.T) {
	mask := [][]float32{{1, 1, 1, 0}, {1}, {0, 0}}
	tests := []struct {
		aggregation Aggregation
		want        [][]float32
	}{
		{"token_mean", [][]float32{{0.25, 0.25, 0.25, 0}, {0.25}, {0, 0}}},
		// Three rows, one empty: each counts in the mean, as torch's clamp(min=1) makes it.
		{"seq_mean_token_mean", [][]float32{{1.0 / 9, 1.0 / 9, 1.0 / 9, 0}, {1.0 / 3}, {0, 0}}},
	}
	for _, tc := range tests {
		got, err := AggregationWeights(mask, tc.aggregation)
		if err != nil {
			t.Fatal(err)
		}
		for b := range tc.want {
			for j := range tc.want[b] {
				if math.Abs(float64(got[b][j]-tc.want[b][j])) > 1e-7 {
					t.Errorf("%s: weights %v, want %v", tc.aggregation, got, tc.want)
				}
			}
		}
	}
	if _, err := AggregationWeights(mask, "sum"); err == nil {
		t.Error("unknown aggregation: no error")
	}
}
