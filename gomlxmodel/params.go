package gomlxmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Config is the shape of a TinyAgent: a causal pre-LayerNorm transformer.
type Config struct {
	Vocab  int // vocabulary size V
	MaxLen int // number of learned positions (the context length)
	DModel int // residual width D
	Heads  int // attention heads H; D must be a multiple of H
	Layers int // transformer blocks
	MLP    int // hidden width of the GELU MLP
}

// DefaultConfig returns TinyAgent's configuration for a vocabulary of the given size: D 64, 4 heads,
// 3 layers, MLP 192, 256 positions: 141,696 + 129·V parameters (about 158k at V = 126, 161k at V = 150).
func DefaultConfig(vocab int) Config {
	return Config{Vocab: vocab, MaxLen: 256, DModel: 64, Heads: 4, Layers: 3, MLP: 192}
}

// Validate reports whether the configuration describes a buildable model.
func (c Config) Validate() error {
	switch {
	case c.Vocab < 2:
		return fmt.Errorf("gomlxmodel: Vocab %d < 2", c.Vocab)
	case c.MaxLen < 2:
		return fmt.Errorf("gomlxmodel: MaxLen %d < 2", c.MaxLen)
	case c.DModel < 1 || c.Heads < 1 || c.DModel%c.Heads != 0:
		return fmt.Errorf("gomlxmodel: DModel %d must be a positive multiple of Heads %d", c.DModel, c.Heads)
	case c.Layers < 1 || c.MLP < 1:
		return fmt.Errorf("gomlxmodel: Layers %d and MLP %d must be positive", c.Layers, c.MLP)
	}
	return nil
}

// paramSpec names one weight tensor and its shape.
type paramSpec struct {
	Name string
	Dims []int
}

func (p paramSpec) size() int {
	n := 1
	for _, d := range p.Dims {
		n *= d
	}
	return n
}

// Per-layer parameter names, in order. Dense weights are [in, out].
var layerParamNames = []string{
	"ln1_g", "ln1_b", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo",
	"ln2_g", "ln2_b", "w1", "b1", "w2", "b2",
}

const numLayerParams = 16

// trunkSpecs lists the transformer trunk's parameters in the order graphs receive them:
// token and position embeddings, the blocks, and the final LayerNorm.
func trunkSpecs(c Config) []paramSpec {
	D, M := c.DModel, c.MLP
	specs := []paramSpec{{"tok", []int{c.Vocab, D}}, {"pos", []int{c.MaxLen, D}}}
	for l := range c.Layers {
		dims := [][]int{{D}, {D}, {D, D}, {D}, {D, D}, {D}, {D, D}, {D}, {D, D}, {D}, {D}, {D}, {D, M}, {M}, {M, D}, {D}}
		for i, name := range layerParamNames {
			specs = append(specs, paramSpec{fmt.Sprintf("layer%d/%s", l, name), dims[i]})
		}
	}
	return append(specs, paramSpec{"lnf_g", []int{D}}, paramSpec{"lnf_b", []int{D}})
}

// policySpecs is the trunk plus the output head [D, V], [V].
func policySpecs(c Config) []paramSpec {
	return append(trunkSpecs(c), paramSpec{"head_w", []int{c.DModel, c.Vocab}}, paramSpec{"head_b", []int{c.Vocab}})
}

// criticSpecs is the trunk plus the scalar value head [D, 1], [1].
func criticSpecs(c Config) []paramSpec {
	return append(trunkSpecs(c), paramSpec{"value_w", []int{c.DModel, 1}}, paramSpec{"value_b", []int{1}})
}

func countParams(specs []paramSpec) int {
	n := 0
	for _, s := range specs {
		n += s.size()
	}
	return n
}

// initParam fills a parameter GPT-2 style: N(0, 0.02) weights and embeddings, residual output
// projections (wo, w2) scaled by 1/√(2·Layers), zero biases, unit LayerNorm gains.
func initParam(c Config, s paramSpec, rng *rand.Rand) []float32 {
	v := make([]float32, s.size())
	base := s.Name
	for i := len(base) - 1; i >= 0; i-- {
		if base[i] == '/' {
			base = base[i+1:]
			break
		}
	}
	switch base {
	case "ln1_g", "ln2_g", "lnf_g":
		for i := range v {
			v[i] = 1
		}
	case "tok", "pos", "wq", "wk", "wv", "w1", "head_w", "value_w", "wo", "w2":
		std := 0.02
		if base == "wo" || base == "w2" {
			std /= math.Sqrt(2 * float64(c.Layers))
		}
		for i := range v {
			v[i] = float32(rng.NormFloat64() * std)
		}
	}
	return v
}

// newRNG is agentrl.NewRNG: PCG seeded with (seed, 0x9e3779b97f4a7c15).
func newRNG(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
}
