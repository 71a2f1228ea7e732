package gomlxmodel

import (
	"fmt"
	"sync"
)

// Critic is the book's value model (arl.make_critic): a copy of a policy's trunk with a fresh
// scalar value head [D, 1], and its own Adam state.
type Critic struct {
	mu sync.Mutex
	st *netState
}

// NewCritic copies policy's trunk weights and draws a fresh value head from seed (N(0, 0.02)
// weights, zero bias). The critic's Adam state starts at zero.
func NewCritic(policy *Model, seed int64) (*Critic, error) {
	policy.mu.Lock()
	src, err := policy.st.clone()
	policy.mu.Unlock()
	if err != nil {
		return nil, err
	}
	cfg := src.cfg
	rng := newRNG(seed)
	nTrunk := len(trunkSpecs(cfg))
	st := newState(src.eng, cfg, criticSpecs(cfg), func(i int, s paramSpec) []float32 {
		if i < nTrunk {
			v, err2 := floatsCopy(src.params[i])
			if err2 != nil {
				err = err2
			}
			return v
		}
		return initParam(cfg, s, rng)
	})
	if err != nil {
		return nil, err
	}
	return &Critic{st: st}, nil
}

// Config returns the critic's configuration (its policy's).
func (c *Critic) Config() Config { return c.st.cfg }

// Engine returns the engine the critic computes on (its policy's).
func (c *Critic) Engine() *Engine { return c.st.eng }

// NumericsKey is the critic's engine's (Engine.NumericsKey).
func (c *Critic) NumericsKey() string { return c.st.eng.NumericsKey() }

// NumParams returns the number of trainable parameters.
func (c *Critic) NumParams() int { return countParams(c.st.specs) }

// Clone returns an independent copy of the critic: weights, Adam moments and step count.
func (c *Critic) Clone() (*Critic, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := c.st.clone()
	if err != nil {
		return nil, err
	}
	return &Critic{st: st}, nil
}

// ResetOptimizer zeroes the Adam moments and the step count, keeping the weights, as a new torch.optim.Adam
// over the critic's parameters would start.
func (c *Critic) ResetOptimizer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.resetOptimizer()
}

// Values is arl.critic_values: for ids [B·T] it returns [B·(T-1)], where index j is the value of
// the state before token j+1 (the critic's output at position j).
func (c *Critic) Values(ids []int32, B, T int) ([]float32, error) {
	v, p, err := c.st.forward(&c.mu, kindValues, buildValues(c.st.cfg), ids, B, T, false)
	if err != nil {
		return nil, err
	}
	return p.unpred(v), nil
}

// Update is one Adam step (learning rate lr) on arl.value_loss(values, oldValues, returns, mask,
// clip): the masked token mean of the squared error, PPO-clipped around oldValues when clip > 0.
// oldValues, returns and mask are [B·(T-1)]. It returns the loss before the step.
func (c *Critic) Update(ids []int32, B, T int, oldValues, returns, mask []float32, clip, lr float64) (float64, error) {
	cfg := c.st.cfg
	if !(lr > 0) {
		return 0, fmt.Errorf("gomlxmodel: learning rate must be positive, got %g", lr)
	}
	p, err := newPadded(B, T, cfg.MaxLen)
	if err != nil {
		return 0, err
	}
	in, _, err := p.ids(ids, cfg.Vocab)
	if err != nil {
		return 0, err
	}
	returnsP, err := p.pred(returns, "returns")
	if err != nil {
		return 0, err
	}
	maskP, err := p.pred(mask, "mask")
	if err != nil {
		return 0, err
	}
	kind := kindValueUpdate
	oldP := make([]float32, p.Bp*p.Tp)
	if clip > 0 {
		kind = kindValueClip
		if oldP, err = p.pred(oldValues, "oldValues"); err != nil {
			return 0, err
		}
	}
	lay, err := c.st.eng.packInputs(p, cfg.MaxLen, &in, nil, []*[]float32{&oldP, &returnsP, &maskP}, maskP)
	if err != nil {
		return 0, err
	}
	e, err := c.st.eng.exec(cfg, packedKind(kind, lay.packed), buildValueUpdate(cfg, clip > 0, lay.packed, c.st.eng.sched.chunk()))
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	stepSize, invSqrtBC2 := c.st.adamScalars(lr)
	d := lay.perPos
	inputs := []any{i32Tensor(in, lay.ids...), f32Tensor(oldP, d...), f32Tensor(returnsP, d...), f32Tensor(maskP, d...)}
	args := append(append(c.st.trainArgs(), inputs...), stepSize, invSqrtBC2, float32(clip))
	out, err := c.st.eng.run(e, packedKind(kind, lay.packed), append(args, lay.extra...))
	freeArgs(inputs)
	freeArgs(lay.extra)
	if err != nil {
		return 0, err
	}
	P := len(c.st.params)
	loss, err := scalar(out[3*P])
	if err != nil {
		freeTensors(out)
		return 0, err
	}
	c.st.replace(out[:3*P])
	return loss, nil
}
