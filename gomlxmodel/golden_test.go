package gomlxmodel

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/agentrl-go/agentrl/internal/golden"
)

const goldenFile = "testdata/golden.json"

// TestGoldenBits: the default decoder (Decoder.Step, at TinyAgent's real size) and the default updates
// (Model.Update of each loss, Critic.Update with and without clipping) produce the bytes whose SHA-256
// digests testdata/golden.json records for this process's Numerics (a process of other numerics logs
// its digests instead). The workloads mix prefills of many lengths, single tokens, finished rows, row
// resets and cache growth, in batches of rows of unequal lengths.
func TestGoldenBits(t *testing.T) {
	numerics, err := Numerics()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Numerics: %s", numerics)
	cfg := DefaultConfig(150)
	for _, B := range []int{16, 70} {
		golden.Check(t, goldenFile, numerics, fmt.Sprintf("decode/B=%d", B), goldenDecode(t, cfg, B))
	}
	golden.Check(t, goldenFile, numerics, "update", goldenUpdate(t, cfg))
	golden.Check(t, goldenFile, numerics, "critic-update", goldenCriticUpdate(t, cfg))
}

// goldenDecode digests every Step's logits of a decoder of B rows over 20 steps.
func goldenDecode(t *testing.T, cfg Config, B int) string {
	m := mustNew(t, cfg, 7)
	rng := rand.New(rand.NewPCG(7, uint64(B)))
	d, err := m.NewDecoder(B)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	h := sha256.New()
	for step := range 20 {
		for b := range B {
			n := 1
			switch {
			case step == 0:
				n = 5 + rng.IntN(36)
			case step == 10 && b%5 == 0: // a per-call context view
				d.ResetRow(b)
				n = 3 + rng.IntN(30)
			case step > 14 && b%3 == 0: // finished
				continue
			case rng.IntN(6) == 0:
				n = 2 + rng.IntN(39)
			}
			d.Feed(b, randomIDs(rng, n, cfg.Vocab))
		}
		logits, err := d.Step()
		if err != nil {
			t.Fatal(err)
		}
		writeFloats(h, logits)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// goldenUpdate digests the statistics of one update of each loss configuration, in turn on one model,
// and the model's bytes (weights and Adam state) after them.
func goldenUpdate(t *testing.T, cfg Config) string {
	m := mustNew(t, cfg, 3)
	b := raggedBatch(rand.New(rand.NewPCG(3, 4)), cfg, 12, 100)
	h := sha256.New()
	for _, lc := range lossConfigs(1e-3) {
		st, err := m.Update(b, lc)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []float64{st.Loss, st.ClipFrac, st.ApproxKL} {
			_ = binary.Write(h, binary.LittleEndian, math.Float64bits(x))
		}
	}
	h.Write(modelBytes(t, m))
	return fmt.Sprintf("%x", h.Sum(nil))
}

// goldenCriticUpdate digests the losses of two critic updates without clipping and two with, and the
// critic's values after them.
func goldenCriticUpdate(t *testing.T, cfg Config) string {
	rng := rand.New(rand.NewPCG(4, 5))
	b := raggedBatch(rng, cfg, 12, 100)
	returns, old := make([]float32, len(b.Mask)), make([]float32, len(b.Mask))
	for i := range returns {
		returns[i] = float32(rng.NormFloat64())
		old[i] = returns[i] + 0.3*float32(rng.NormFloat64())
	}
	c, err := NewCritic(mustNew(t, cfg, 4), 5)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, clip := range []float64{0, 0, 0.2, 0.2} {
		loss, err := c.Update(b.IDs, b.B, b.T, old, returns, b.Mask, clip, 1e-3)
		if err != nil {
			t.Fatal(err)
		}
		_ = binary.Write(h, binary.LittleEndian, math.Float64bits(loss))
	}
	values, err := c.Values(b.IDs, b.B, b.T)
	if err != nil {
		t.Fatal(err)
	}
	writeFloats(h, values)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// writeFloats writes the bits of x to h.
func writeFloats(h hash.Hash, x []float32) {
	_ = binary.Write(h, binary.LittleEndian, x)
}
