package gomlxmodel

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestCritic(t *testing.T) {
	cfg := tinyConfig()
	policy := mustNew(t, cfg, 6)
	c, err := NewCritic(policy, 7)
	if err != nil {
		t.Fatal(err)
	}
	if want := policy.NumParams() - (cfg.DModel+1)*cfg.Vocab + cfg.DModel + 1; c.NumParams() != want {
		t.Errorf("critic has %d parameters, want %d", c.NumParams(), want)
	}
	rng := rand.New(rand.NewPCG(6, 7))
	B, T := 4, 10
	ids := randomIDs(rng, B*T, cfg.Vocab)
	returns, mask := make([]float32, B*(T-1)), make([]float32, B*(T-1))
	for i := range returns {
		returns[i] = float32(rng.NormFloat64())
		if rng.IntN(3) > 0 {
			mask[i] = 1
		}
	}
	for _, clip := range []float64{0, 0.2} {
		c2, err := c.Clone()
		if err != nil {
			t.Fatal(err)
		}
		old, err := c2.Values(ids, B, T)
		if err != nil {
			t.Fatal(err)
		}
		if len(old) != B*(T-1) {
			t.Fatalf("Values returned %d values, want %d", len(old), B*(T-1))
		}
		var first, last float64
		for i := range 10 {
			values, err := c2.Values(ids, B, T)
			if err != nil {
				t.Fatal(err)
			}
			loss, err := c2.Update(ids, B, T, old, returns, mask, clip, 1e-2)
			if err != nil {
				t.Fatal(err)
			}
			if want := ValueLoss(values, old, returns, mask, clip); math.Abs(loss-want) > 1e-4*math.Max(1, want) {
				t.Errorf("clip %g step %d: graph loss %g, host value_loss %g", clip, i, loss, want)
			}
			if i == 0 {
				first = loss
			}
			last = loss
		}
		if !(last < first) {
			t.Errorf("clip %g: value loss %g -> %g, want a decrease", clip, first, last)
		}
	}
	// The critic's clone is independent and its stream is bit-exact.
	var a, b bytes.Buffer
	if _, err := c.WriteTo(&a); err != nil {
		t.Fatal(err)
	}
	r, err := ReadCritic(testEng(), bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.WriteTo(&b); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("ReadCritic(testEng(), WriteTo) is not bit-exact (%v)", err)
	}
	if _, err := c.Update(ids, B, T, nil, returns, mask, 0, 0); err == nil {
		t.Error("zero learning rate: no error")
	}
}

// TestCriticResetOptimizer: after ResetOptimizer a critic takes the step of a fresh critic with its weights.
func TestCriticResetOptimizer(t *testing.T) {
	cfg := tinyConfig()
	policy := mustNew(t, cfg, 8)
	rng := rand.New(rand.NewPCG(8, 9))
	B, T := 3, 8
	ids := randomIDs(rng, B*T, cfg.Vocab)
	returns, mask := make([]float32, B*(T-1)), make([]float32, B*(T-1))
	for i := range returns {
		returns[i], mask[i] = float32(rng.NormFloat64()), 1
	}
	step := func(c *Critic) {
		t.Helper()
		old, err := c.Values(ids, B, T)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Update(ids, B, T, old, returns, mask, 0, 1e-2); err != nil {
			t.Fatal(err)
		}
	}
	used, err := NewCritic(policy, 9)
	if err != nil {
		t.Fatal(err)
	}
	step(used)
	step(used)
	reset, err := used.Clone()
	if err != nil {
		t.Fatal(err)
	}
	reset.ResetOptimizer()
	fresh, err := NewCritic(policy, 10)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.st.params, err = copyTensors(used.st.params); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Critic{fresh, reset, used} {
		step(c)
	}
	same := func(a, b *Critic) bool {
		var x, y bytes.Buffer
		if _, err := a.WriteTo(&x); err != nil {
			t.Fatal(err)
		}
		if _, err := b.WriteTo(&y); err != nil {
			t.Fatal(err)
		}
		return bytes.Equal(x.Bytes(), y.Bytes())
	}
	if !same(reset, fresh) {
		t.Error("reset and fresh critics took different steps")
	}
	if same(used, fresh) {
		t.Error("the Adam state made no difference: the test cannot tell a reset from none")
	}
}

// ValueLoss evaluates arl.value_loss on the host (for tests): the masked token mean
// of (v − R)², or with clip > 0 of max((v − R)², (old + clip(v − old, −clip, clip) − R)²).
func ValueLoss(values, oldValues, returns, mask []float32, clip float64) float64 {
	num, den := 0.0, 0.0
	for i, v := range values {
		e := float64(v) - float64(returns[i])
		sq := e * e
		if clip > 0 {
			d := min(max(float64(v)-float64(oldValues[i]), -clip), clip)
			ec := float64(oldValues[i]) + d - float64(returns[i])
			sq = max(sq, ec*ec)
		}
		num += sq * float64(mask[i])
		den += float64(mask[i])
	}
	return num / max(den, 1)
}
