package gomlxmodel

import (
	"fmt"
	"math"
	"sync"
)

// Model is TinyAgent (the book's policy): a causal pre-LN transformer with learned token and
// position embeddings, GELU MLPs, a final LayerNorm and an output head, plus its Adam state.
//
// Token ids are int32 rows, right-padded; positions t of a row predict token t+1. Methods are safe
// for concurrent use (calls on one Model are serialized).
type Model struct {
	mu     sync.Mutex
	st     *netState
	anchor *Model // see Anchor
}

// New returns a TinyAgent computing on eng with seeded initialization: the same cfg and seed give
// bit-identical weights in every process.
func New(eng *Engine, cfg Config, seed int64) (*Model, error) {
	if eng == nil {
		return nil, errNoEngine
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rng := newRNG(seed)
	st := newState(eng, cfg, policySpecs(cfg), func(_ int, s paramSpec) []float32 { return initParam(cfg, s, rng) })
	return &Model{st: st}, nil
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.st.cfg }

// Engine returns the engine the model computes on.
func (m *Model) Engine() *Engine { return m.st.eng }

// NumericsKey is the model's engine's (Engine.NumericsKey): a result key that holds the model holds what it
// computes with.
func (m *Model) NumericsKey() string { return m.st.eng.NumericsKey() }

// NumParams returns the number of trainable parameters.
func (m *Model) NumParams() int { return countParams(m.st.specs) }

// Steps returns the number of Adam steps the model has taken.
func (m *Model) Steps() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.step
}

// Clone returns an independent copy of the model: weights, Adam moments and step count.
func (m *Model) Clone() (*Model, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, err := m.st.clone()
	if err != nil {
		return nil, err
	}
	return &Model{st: st}, nil
}

// SetAnchor makes ref the model's anchor, the policy a KL-regularized update pulls it towards (nil: none yet).
// ref is read, never trained, by the updates; the caller must not train it either.
func (m *Model) SetAnchor(ref *Model) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.anchor = ref
}

// Anchor returns the model's anchor; a model without one is first given a copy of itself (weights as they are
// now), so that a run's first KL-regularized update anchors the run to where it started. Clone does not copy
// the anchor.
func (m *Model) Anchor() (*Model, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.anchor == nil {
		st, err := m.st.clone()
		if err != nil {
			return nil, err
		}
		m.anchor = &Model{st: st}
	}
	return m.anchor, nil
}

// ParamNames returns the names of the model's parameters in storage order: "tok", "pos", then each layer's
// ("layer0/ln1_g", "layer0/wq", …, "layer0/w2", "layer0/b2"), then "lnf_g", "lnf_b", "head_w", "head_b".
func (m *Model) ParamNames() []string {
	names := make([]string, len(m.st.specs))
	for i, s := range m.st.specs {
		names[i] = s.Name
	}
	return names
}

// CopyParams sets every parameter whose name satisfies pick to src's value and returns the names it copied; the
// other parameters, the Adam state and the step count stay as they are. src must have the same configuration; m
// itself as src changes nothing and reports nothing copied. It is a probe of which weights carry a change of
// behavior: copy a group of a base model's weights back into a trained copy and see what the copy does.
func (m *Model) CopyParams(src *Model, pick func(name string) bool) ([]string, error) {
	if src == m {
		return nil, nil
	}
	if src.Config() != m.Config() {
		return nil, fmt.Errorf("gomlxmodel: CopyParams from a model with configuration %+v into one with %+v", src.Config(), m.Config())
	}
	values, err := src.paramValues(pick)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var copied []string
	for i, s := range m.st.specs {
		if v, ok := values[i]; ok {
			_ = m.st.params[i].FinalizeAll() // owned by m alone: executions hold m.mu
			m.st.params[i] = f32Tensor(v, s.Dims...)
			copied = append(copied, s.Name)
		}
	}
	return copied, nil
}

// paramValues returns copies of the values of the parameters whose names satisfy pick, by index.
func (m *Model) paramValues(pick func(name string) bool) (map[int][]float32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	values := make(map[int][]float32)
	for i, s := range m.st.specs {
		if !pick(s.Name) {
			continue
		}
		v, err := floatsCopy(m.st.params[i])
		if err != nil {
			return nil, err
		}
		values[i] = v
	}
	return values, nil
}

// ResetOptimizer zeroes the Adam moments and the step count, keeping the weights: the model then trains as a
// new torch.optim.Adam over its parameters would, which is how every training run of the chapter starts from
// the RL base agent (copy.deepcopy(rl_base), then a fresh Adam).
func (m *Model) ResetOptimizer() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.resetOptimizer()
}

// Logits is model(ids): for ids [B·T] it returns logits [B·T·V].
func (m *Model) Logits(ids []int32, B, T int) ([]float32, error) {
	cfg := m.st.cfg
	all, p, err := m.st.forward(&m.mu, kindLogits, buildLogits(cfg), ids, B, T, false)
	if err != nil {
		return nil, err
	}
	V := cfg.Vocab
	logits := make([]float32, B*T*V)
	for b := range B {
		copy(logits[b*T*V:(b+1)*T*V], all[b*p.Tp*V:(b*p.Tp+T)*V])
	}
	return logits, nil
}

// SequenceLogProbs returns log p(ids[b, t+1] | ids[b, ≤t]) for ids [B·T]: [B·(T-1)].
func (m *Model) SequenceLogProbs(ids []int32, B, T int) ([]float32, error) {
	logp, p, err := m.st.forward(&m.mu, kindLogProbs, buildLogProbs(m.st.cfg), ids, B, T, true)
	if err != nil {
		return nil, err
	}
	return p.unpred(logp), nil
}

// LogitGradAbsSum returns, for each predicted position, Σ_v |∂L/∂logits[v]| of the REINFORCE loss
// L = −Σ_{b,t} adv[b]·mask[b,t]·log p(ids[b,t+1]) / Σ mask (token_mean): [B·(T-1)]. It is exactly
// zero where mask is 0 and non-zero where mask is 1 (given a non-zero advantage): the book's
// zero-gradient check. adv is [B], mask [B·(T-1)].
func (m *Model) LogitGradAbsSum(ids []int32, B, T int, adv, mask []float32) ([]float32, error) {
	cfg := m.st.cfg
	p, err := newPadded(B, T, cfg.MaxLen)
	if err != nil {
		return nil, err
	}
	in, targets, err := p.ids(ids, cfg.Vocab)
	if err != nil {
		return nil, err
	}
	if len(adv) != B {
		return nil, fmt.Errorf("gomlxmodel: adv has %d values for %d rows", len(adv), B)
	}
	pm, err := p.pred(mask, "mask")
	if err != nil {
		return nil, err
	}
	norm := 0.0
	for _, x := range pm {
		norm += float64(x)
	}
	norm = math.Max(norm, 1)
	weight := make([]float32, len(pm))
	for b := range B {
		for t := range p.Tp {
			weight[b*p.Tp+t] = float32(float64(adv[b]) * float64(pm[b*p.Tp+t]) / norm)
		}
	}
	e, err := m.st.eng.exec(cfg, kindGradAbs, buildGradAbs(cfg))
	if err != nil {
		return nil, err
	}
	inputs := []any{i32Tensor(in, p.Bp, p.Tp), i32Tensor(targets, p.Bp, p.Tp), f32Tensor(weight, p.Bp, p.Tp)}
	m.mu.Lock()
	out, err := m.st.eng.run(e, kindGradAbs, append(m.st.paramArgs(), inputs...))
	m.mu.Unlock()
	freeArgs(inputs)
	if err != nil {
		return nil, err
	}
	g, err := floats(out[0])
	freeTensors(out[1:])
	if err != nil {
		return nil, err
	}
	return p.unpred(g), nil
}

// UpdateBatch is one policy-update batch: ids [B·T] and, per predicted position, Mask (the action
// mask), OldLogp (log-probs under the sampler) and Adv (advantages), each [B·(T-1)].
type UpdateBatch struct {
	B, T               int
	IDs                []int32
	Mask, OldLogp, Adv []float32
}

// LossKind names the policy loss of Update. Its values are the book's names ("ppo", "reinforce"): a
// LossKind prints and JSON-encodes as the plain string.
type LossKind string

const (
	// LossPPO is the clipped surrogate with ratio exp(logp − OldLogp) and clip range ClipEps.
	LossPPO LossKind = "ppo"
	// LossReinforce is −Adv·logp.
	LossReinforce LossKind = "reinforce"
)

// Aggregation names how Update averages the per-token loss. Its values are the book's names ("token_mean",
// "seq_mean_token_mean"): an Aggregation prints and JSON-encodes as the plain string.
type Aggregation string

const (
	// TokenMean averages over every masked token of the batch (sum over masked tokens / their number).
	TokenMean Aggregation = "token_mean"
	// SeqMeanTokenMean averages each row's masked tokens, then the B rows.
	SeqMeanTokenMean Aggregation = "seq_mean_token_mean"
)

// LossConfig selects the policy loss of Update.
//
// Kind is LossPPO or LossReinforce, Aggregation TokenMean or SeqMeanTokenMean. LR is Adam's learning rate;
// MaxGradNorm > 0 clips the global gradient norm.
type LossConfig struct {
	Kind        LossKind
	ClipEps     float64
	Aggregation Aggregation
	LR          float64
	MaxGradNorm float64
}

// UpdateStats reports one update: the aggregated loss before the step, the fraction of masked
// tokens whose ratio left [1−ε, 1+ε], and the masked mean of (r − 1) − log r.
type UpdateStats struct {
	Loss, ClipFrac, ApproxKL float64
}

// AggregationWeights returns the share of the loss that Update gives each position of mask (one row
// per sequence, 1 on the positions the loss covers, rows of any length) under aggregation TokenMean
// (every covered position alike) or SeqMeanTokenMean (every sequence alike, and its positions alike within
// it). The shares sum to 1 when every row covers a position; a row that covers none still counts among the
// sequences that SeqMeanTokenMean averages over.
func AggregationWeights(mask [][]float32, aggregation Aggregation) ([][]float32, error) {
	T := 0
	for _, row := range mask {
		T = max(T, len(row))
	}
	flat := make([]float32, len(mask)*T)
	for b, row := range mask {
		copy(flat[b*T:], row)
	}
	w, err := aggregationWeights(padded{B: len(mask), T: T, Bp: len(mask), Tp: T}, flat, aggregation)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(mask))
	for b, row := range mask {
		out[b] = w[b*T : b*T+len(row) : b*T+len(row)]
	}
	return out, nil
}

// aggregationWeights returns each padded token's share of the aggregated loss.
func aggregationWeights(p padded, mask []float32, aggregation Aggregation) ([]float32, error) {
	w := make([]float32, len(mask))
	switch aggregation {
	case TokenMean:
		total := 0.0
		for _, x := range mask {
			total += float64(x)
		}
		if total == 0 {
			return w, nil
		}
		for i, x := range mask {
			w[i] = float32(float64(x) / total)
		}
	case SeqMeanTokenMean:
		for b := range p.B {
			row := mask[b*p.Tp : (b+1)*p.Tp]
			count := 0.0
			for _, x := range row {
				count += float64(x)
			}
			if count == 0 {
				continue
			}
			for t, x := range row {
				w[b*p.Tp+t] = float32(float64(x) / (count * float64(p.B)))
			}
		}
	default:
		return nil, fmt.Errorf("gomlxmodel: unknown loss aggregation %q (want %q or %q)", aggregation, TokenMean, SeqMeanTokenMean)
	}
	return w, nil
}

// Update is one optimizer step of the policy (the book's rl_update inner step): the loss of lc on
// batch b, its gradient, optional global-norm clipping and one Adam step, fused in one graph.
func (m *Model) Update(b UpdateBatch, lc LossConfig) (UpdateStats, error) {
	cfg := m.st.cfg
	var kind string
	switch lc.Kind {
	case LossPPO:
		kind = kindPPO
		if lc.ClipEps <= 0 {
			return UpdateStats{}, fmt.Errorf("gomlxmodel: ppo needs ClipEps > 0, got %g", lc.ClipEps)
		}
	case LossReinforce:
		kind = kindReinforce
	default:
		return UpdateStats{}, fmt.Errorf("gomlxmodel: unknown loss kind %q (want ppo or reinforce)", lc.Kind)
	}
	if !(lc.LR > 0) {
		return UpdateStats{}, fmt.Errorf("gomlxmodel: learning rate must be positive, got %g", lc.LR)
	}
	p, err := newPadded(b.B, b.T, cfg.MaxLen)
	if err != nil {
		return UpdateStats{}, err
	}
	in, targets, err := p.ids(b.IDs, cfg.Vocab)
	if err != nil {
		return UpdateStats{}, err
	}
	mask, err := p.pred(b.Mask, "Mask")
	if err != nil {
		return UpdateStats{}, err
	}
	oldLogp, err := p.pred(b.OldLogp, "OldLogp")
	if err != nil {
		return UpdateStats{}, err
	}
	adv, err := p.pred(b.Adv, "Adv")
	if err != nil {
		return UpdateStats{}, err
	}
	weight, err := aggregationWeights(p, mask, lc.Aggregation)
	if err != nil {
		return UpdateStats{}, err
	}
	maxNorm := float32(math.Inf(1))
	if lc.MaxGradNorm > 0 {
		maxNorm = float32(lc.MaxGradNorm)
	}
	lay, err := m.st.eng.packInputs(p, cfg.MaxLen, &in, []*[]int32{&targets}, []*[]float32{&mask, &weight, &oldLogp, &adv}, mask, weight)
	if err != nil {
		return UpdateStats{}, err
	}
	e, err := m.st.eng.exec(cfg, packedKind(kind, lay.packed), buildPolicyUpdate(cfg, kind, lay.packed, m.st.eng.sched.chunk()))
	if err != nil {
		return UpdateStats{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	stepSize, invSqrtBC2 := m.st.adamScalars(lc.LR)
	d := lay.perPos
	inputs := []any{i32Tensor(in, lay.ids...), i32Tensor(targets, d...),
		f32Tensor(mask, d...), f32Tensor(weight, d...), f32Tensor(oldLogp, d...), f32Tensor(adv, d...)}
	args := append(append(m.st.trainArgs(), inputs...), stepSize, invSqrtBC2, float32(lc.ClipEps), maxNorm)
	out, err := m.st.eng.run(e, packedKind(kind, lay.packed), append(args, lay.extra...))
	freeArgs(inputs)
	freeArgs(lay.extra)
	if err != nil {
		return UpdateStats{}, err
	}
	P := len(m.st.params)
	var st UpdateStats
	for i, dst := range []*float64{&st.Loss, &st.ClipFrac, &st.ApproxKL} {
		if *dst, err = scalar(out[3*P+i]); err != nil {
			freeTensors(out)
			return UpdateStats{}, err
		}
	}
	m.st.replace(out[:3*P])
	return st, nil
}
