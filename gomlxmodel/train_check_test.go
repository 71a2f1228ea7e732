package gomlxmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// End-to-end checks of the fused update graphs against independent references: the policy gradient
// against finite differences of the loss, Adam against torch.optim.Adam's formula, and UpdateStats
// against a host computation of the book's losses. They run under the padded layout and the packed
// one (rows packed end to end, block-causal attention in chunks of 8, the last block's queries at the
// read positions only), whatever the backend; they reuse the shapes of TestPackedUpdateMatchesPadded
// (tinyConfig, 12 rows of 20 tokens), so they compile nothing new in a full run.

// layouts are the two ways an update reaches its graph.
var layouts = []struct {
	name   string
	packed bool
}{{"padded", false}, {"packed", true}}

// paramValuesOf copies every weight of m (or every first moment, with moments) to the host.
func paramValuesOf(t *testing.T, m *Model, moments bool) [][]float32 {
	t.Helper()
	src := m.st.params
	if moments {
		src = m.st.m
	}
	out := make([][]float32, len(src))
	for i, x := range src {
		v, err := floatsCopy(x)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
	}
	return out
}

// TestUpdateGradientFiniteDifferences recovers the (clipped) gradient of Update's first Adam step from
// the first moment, m₁ = (1−β₁)·g = 0.1·g, and checks it against central finite differences of the loss
// Update reports, for one weight of every parameter tensor and along each tensor's gradient; and that a
// MaxGradNorm of a tenth of the global norm scales the whole gradient to that norm. It catches errors
// in the loss's gradient: dropping the rowsum term of blockCausalAttention's dS fails the packed layout
// (wq, bq, wk off by 60-70%, ln1 by 10-40%), and so would a wrong operand in dot's hand-written
// gradient, a mask or position offset between loss and logits, or a clip that is not global.
func TestUpdateGradientFiniteDifferences(t *testing.T) {
	cfg := tinyConfig()
	base := mustNew(t, cfg, 7)
	specs := base.st.specs
	// At initialization (N(0, 0.02) weights) attention is almost uniform, and the gradients of wq, wk
	// and bq (~1e-6) drown in the rounding of a float32 loss: sharper attention makes them testable.
	for k, s := range specs {
		if strings.HasSuffix(s.Name, "/wq") || strings.HasSuffix(s.Name, "/wk") {
			v, err := floatsCopy(base.st.params[k])
			if err != nil {
				t.Fatal(err)
			}
			for i := range v {
				v[i] *= 10
			}
			base.st.params[k] = f32Tensor(v, s.Dims...)
		}
	}
	for _, lay := range layouts {
		for _, lc := range []LossConfig{
			{Kind: "reinforce", Aggregation: "token_mean", LR: 1e-3},
			{Kind: "ppo", ClipEps: 0.2, Aggregation: "seq_mean_token_mean", LR: 1e-3},
		} {
			t.Run(lay.name+"/"+string(lc.Kind)+"/"+string(lc.Aggregation), func(t *testing.T) {
				b := raggedBatch(rand.New(rand.NewPCG(8, 9)), cfg, 12, 20)
				withPacking(lay.packed, []engined{base}, func() {
					// update takes one step from base with weight tensor k set to w (k < 0: none) and returns the
					// reported loss and the model after the step.
					update := func(lc LossConfig, k int, w []float32) (float64, *Model) {
						m, err := base.Clone()
						if err != nil {
							t.Fatal(err)
						}
						if k >= 0 {
							m.st.params[k] = f32Tensor(w, specs[k].Dims...)
						}
						st, err := m.Update(b, lc)
						if err != nil {
							t.Fatal(err)
						}
						return st.Loss, m
					}
					grad := func(lc LossConfig) ([][]float32, float64) {
						_, m := update(lc, -1, nil)
						g := paramValuesOf(t, m, true)
						norm := 0.0
						for _, gk := range g {
							for i := range gk {
								gk[i] /= 1 - adamBeta1
								norm += float64(gk[i]) * float64(gk[i])
							}
						}
						return g, math.Sqrt(norm)
					}
					g, norm := grad(lc)
					clipped := lc
					clipped.MaxGradNorm = norm / 10
					gc, clippedNorm := grad(clipped)
					if math.Abs(clippedNorm-norm/10) > 1e-3*norm/10 {
						t.Errorf("gradient norm %g clipped to %g: got %g", norm, norm/10, clippedNorm)
					}
					if d := math.Abs(float64(gc[0][0])*10 - float64(g[0][0])); d > 1e-3*math.Abs(float64(g[0][0]))+1e-7 {
						t.Errorf("clipped gradient is not the gradient scaled by 1/10: %g vs %g", gc[0][0], g[0][0])
					}
					weights := paramValuesOf(t, base, false)
					// fd is the central difference of the loss along direction u of weight tensor k, step h.
					const h = 1e-2
					fd := func(k int, u []float32) float64 {
						plus, minus := slices.Clone(weights[k]), slices.Clone(weights[k])
						for i, x := range u {
							plus[i] += h * x
							minus[i] -= h * x
						}
						lp, _ := update(lc, k, plus)
						lm, _ := update(lc, k, minus)
						return (lp - lm) / (2 * h)
					}
					rng := rand.New(rand.NewPCG(1, 1))
					worst := 0.0
					for k, s := range specs {
						// One weight: catches a gradient in the wrong place.
						i := rng.IntN(s.size())
						u := make([]float32, s.size())
						u[i] = 1
						want, got := fd(k, u), float64(g[k][i])
						if d := math.Abs(want - got); d > 2e-5+0.05*math.Abs(want) {
							t.Errorf("%s[%d]: gradient %g, finite difference %g", s.Name, i, got, want)
						}
						// Along the tensor's own gradient ĝ: the derivative is ⟨g_true, ĝ⟩ = |g| when g is right.
						// The signal is the whole tensor's, well above the loss's rounding even where each
						// weight's gradient is not (wq and wk: ~1e-5 each).
						gk := 0.0
						for _, x := range g[k] {
							gk += float64(x) * float64(x)
						}
						gk = math.Sqrt(gk)
						if gk < 1e-4 { // bk: softmax ignores a bias added to every key (gradient ~1e-11)
							continue
						}
						for j, x := range g[k] {
							u[j] = float32(float64(x) / gk)
						}
						want = fd(k, u)
						worst = max(worst, math.Abs(want-gk)/gk)
						if math.Abs(want-gk) > 0.03*gk {
							t.Errorf("%s: gradient norm %g, finite difference along the gradient %g", s.Name, gk, want)
						}
					}
					t.Logf("global gradient norm %g; worst relative error along a tensor's gradient %.3g", norm, worst)
				})
			})
		}
	}
}

// TestAdamMatchesTorchFormula takes three clipped PPO steps and checks each against torch.optim.Adam
// (β = (0.9, 0.999), ε = 1e-8): with g recovered from the moments as g = (m₁ − β₁·m₀)/(1 − β₁),
// v₁ = β₂·v₀ + (1 − β₂)·g² and p₁ = p₀ − lr/(1 − β₁ᵗ)·m₁/(√v₁/√(1 − β₂ᵗ) + ε). It catches a missing or
// wrong bias correction (adamScalars), ε inside the square root, and a wrong β.
func TestAdamMatchesTorchFormula(t *testing.T) {
	cfg := tinyConfig()
	for _, lay := range layouts {
		t.Run(lay.name, func(t *testing.T) {
			m := mustNew(t, cfg, 7)
			b := raggedBatch(rand.New(rand.NewPCG(8, 9)), cfg, 12, 20)
			const lr = 3e-3
			lc := LossConfig{Kind: "ppo", ClipEps: 0.2, Aggregation: "token_mean", LR: lr, MaxGradNorm: 0.5}
			snap := func() (p, m1, v [][]float32) {
				var err error
				p, m1 = paramValuesOf(t, m, false), paramValuesOf(t, m, true)
				v = make([][]float32, len(m.st.v))
				for i, x := range m.st.v {
					if v[i], err = floatsCopy(x); err != nil {
						t.Fatal(err)
					}
				}
				return p, m1, v
			}
			p0, m0, v0 := snap()
			worstP, worstV := 0.0, 0.0
			withPacking(lay.packed, []engined{m}, func() {
				for step := 1; step <= 3; step++ {
					if _, err := m.Update(b, lc); err != nil {
						t.Fatal(err)
					}
					p1, m1, v1 := snap()
					bc1 := 1 - math.Pow(adamBeta1, float64(step))
					bc2 := 1 - math.Pow(adamBeta2, float64(step))
					for k := range p1 {
						for i := range p1[k] {
							g := (float64(m1[k][i]) - 0.9*float64(m0[k][i])) / 0.1
							wantV := 0.999*float64(v0[k][i]) + 0.001*g*g
							wantP := float64(p0[k][i]) - lr/bc1*float64(m1[k][i])/(math.Sqrt(float64(v1[k][i]))/math.Sqrt(bc2)+1e-8)
							worstP = max(worstP, math.Abs(float64(p1[k][i])-wantP))
							if wantV > 1e-12 {
								worstV = max(worstV, math.Abs(float64(v1[k][i])-wantV)/wantV)
							}
						}
					}
					p0, m0, v0 = p1, m1, v1
				}
			})
			t.Logf("worst |weight − torch Adam| %.3g, worst relative error of v %.3g", worstP, worstV)
			if worstP > 1e-6 || worstV > 1e-2 {
				t.Errorf("Adam differs from torch's: weights by %g, v by %g (relative)", worstP, worstV)
			}
		})
	}
}

// TestUpdateStatsMatchHost computes the book's losses on the host from SequenceLogProbs — ppo
// −min(r·A, clip(r, 1±ε)·A) and reinforce −A·logp, aggregated as token_mean (Σ over the masked tokens of
// the batch / their number) or seq_mean_token_mean (each row's masked mean, averaged over all B rows,
// a row without masked tokens counting as 0, as torch's clamp(min=1) makes it), ClipFrac (|r − 1| > ε;
// 0 for reinforce) and ApproxKL ((r − 1) − log r) — and compares them with UpdateStats. Row 3 has an empty mask. It
// catches, for example, seq_mean_token_mean averaging over the non-empty rows only, a ratio taken
// at the wrong position, and a clip fraction counted outside the mask.
func TestUpdateStatsMatchHost(t *testing.T) {
	cfg := tinyConfig()
	const B, T, eps = 12, 20, 0.2
	rng := rand.New(rand.NewPCG(1, 2))
	ids := randomIDs(rng, B*T, cfg.Vocab)
	mask, adv, noise := make([]float32, B*(T-1)), make([]float32, B*(T-1)), make([]float32, B*(T-1))
	for i := range mask {
		if i/(T-1) != 3 && rng.IntN(3) > 0 {
			mask[i] = 1
		}
		adv[i] = float32(rng.NormFloat64())
		noise[i] = 0.4 * float32(rng.NormFloat64())
	}
	for _, lay := range layouts {
		for _, kind := range []LossKind{LossPPO, LossReinforce} {
			for _, agg := range []Aggregation{TokenMean, SeqMeanTokenMean} {
				t.Run(fmt.Sprintf("%s/%s/%s", lay.name, kind, agg), func(t *testing.T) {
					m := mustNew(t, cfg, 3)
					logp, err := m.SequenceLogProbs(ids, B, T)
					if err != nil {
						t.Fatal(err)
					}
					old := make([]float32, len(logp))
					for i := range old {
						old[i] = logp[i] + noise[i]
					}
					num, den, seqSum, clipped, kl := 0.0, 0.0, 0.0, 0.0, 0.0
					for b := range B {
						rowNum, rowDen := 0.0, 0.0
						for j := range T - 1 {
							i := b*(T-1) + j
							logRatio := float64(logp[i]) - float64(old[i])
							r := math.Exp(logRatio)
							a := float64(adv[i])
							l := -a * float64(logp[i])
							if kind == "ppo" {
								l = -math.Min(r*a, math.Min(math.Max(r, 1-eps), 1+eps)*a)
							}
							mk := float64(mask[i])
							num, den, rowNum, rowDen = num+l*mk, den+mk, rowNum+l*mk, rowDen+mk
							if math.Abs(r-1) > eps {
								clipped += mk
							}
							kl += mk * ((r - 1) - logRatio)
						}
						seqSum += rowNum / math.Max(rowDen, 1)
					}
					want := UpdateStats{Loss: num / den, ClipFrac: clipped / den, ApproxKL: kl / den}
					if agg == SeqMeanTokenMean {
						want.Loss = seqSum / B
					}
					var got UpdateStats
					withPacking(lay.packed, []engined{m}, func() {
						got, err = m.Update(UpdateBatch{B: B, T: T, IDs: ids, Mask: mask, OldLogp: old, Adv: adv},
							LossConfig{Kind: kind, ClipEps: eps, Aggregation: agg, LR: 1e-3, MaxGradNorm: 1})
					})
					if err != nil {
						t.Fatal(err)
					}
					if kind == "reinforce" { // no clipping: no clip fraction
						want.ClipFrac = 0
					}
					if math.Abs(got.Loss-want.Loss) > 1e-5 || math.Abs(got.ClipFrac-want.ClipFrac) > 1e-6 ||
						math.Abs(got.ApproxKL-want.ApproxKL) > 1e-5 {
						t.Errorf("UpdateStats %+v, host reference %+v", got, want)
					}
				})
			}
		}
	}
}
