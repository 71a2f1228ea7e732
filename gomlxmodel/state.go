package gomlxmodel

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// netState is what a Model or a Critic owns: its weights and Adam moments, as host tensors in spec
// order, and the number of Adam steps taken; and the engine it computes on.
type netState struct {
	eng    *Engine
	cfg    Config
	specs  []paramSpec
	params []*tensors.Tensor
	m, v   []*tensors.Tensor // Adam first and second moments
	step   int64
}

// newState allocates zero weights and moments for specs; fill sets each parameter's values.
func newState(eng *Engine, cfg Config, specs []paramSpec, fill func(i int, s paramSpec) []float32) *netState {
	st := &netState{eng: eng, cfg: cfg, specs: specs}
	for i, s := range specs {
		st.params = append(st.params, f32Tensor(fill(i, s), s.Dims...))
		st.m = append(st.m, f32Tensor(make([]float32, s.size()), s.Dims...))
		st.v = append(st.v, f32Tensor(make([]float32, s.size()), s.Dims...))
	}
	return st
}

func copyTensors(ts []*tensors.Tensor) ([]*tensors.Tensor, error) {
	out := make([]*tensors.Tensor, len(ts))
	for i, t := range ts {
		v, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, fmt.Errorf("gomlxmodel: copying tensor: %w", err)
		}
		out[i] = f32Tensor(v, t.Shape().Dimensions...)
	}
	return out, nil
}

// clone deep-copies weights and moments.
func (s *netState) clone() (*netState, error) {
	c := &netState{eng: s.eng, cfg: s.cfg, specs: s.specs, step: s.step}
	var err error
	if c.params, err = copyTensors(s.params); err != nil {
		return nil, err
	}
	if c.m, err = copyTensors(s.m); err != nil {
		return nil, err
	}
	if c.v, err = copyTensors(s.v); err != nil {
		return nil, err
	}
	return c, nil
}

// resetOptimizer zeroes the Adam moments and the step count, freeing the old moments (the caller holds
// the lock that every execution on s holds).
func (s *netState) resetOptimizer() {
	for i, sp := range s.specs {
		_ = s.m[i].FinalizeAll()
		_ = s.v[i].FinalizeAll()
		s.m[i] = f32Tensor(make([]float32, sp.size()), sp.Dims...)
		s.v[i] = f32Tensor(make([]float32, sp.size()), sp.Dims...)
	}
	s.step = 0
}

// paramArgs returns the weights as executor arguments.
func (s *netState) paramArgs() []any {
	args := make([]any, 0, len(s.params)+8)
	for _, t := range s.params {
		args = append(args, t)
	}
	return args
}

// trainArgs returns weights, first moments and second moments as executor arguments.
func (s *netState) trainArgs() []any {
	args := make([]any, 0, 3*len(s.params)+16)
	for _, ts := range [][]*tensors.Tensor{s.params, s.m, s.v} {
		for _, t := range ts {
			args = append(args, t)
		}
	}
	return args
}

// replace installs the new weights and moments returned by an update graph (3·P tensors, in order)
// and frees the old ones.
func (s *netState) replace(out []*tensors.Tensor) {
	P := len(s.params)
	for i := range P {
		for _, pair := range []struct {
			dst []*tensors.Tensor
			src *tensors.Tensor
		}{{s.params, out[i]}, {s.m, out[P+i]}, {s.v, out[2*P+i]}} {
			_ = pair.dst[i].FinalizeAll()
			pair.dst[i] = pair.src
		}
	}
	s.step++
}

// adamScalars returns PyTorch Adam's step size lr/(1-β1^t) and 1/√(1-β2^t) for the next step t.
func (s *netState) adamScalars(lr float64) (stepSize, invSqrtBC2 float32) {
	t := float64(s.step + 1)
	bc1 := 1 - math.Pow(adamBeta1, t)
	bc2 := 1 - math.Pow(adamBeta2, t)
	return float32(lr / bc1), float32(1 / math.Sqrt(bc2))
}
