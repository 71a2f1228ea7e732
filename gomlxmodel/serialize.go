package gomlxmodel

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
)

// Two ways to store a model:
//
//   - Save/Load write GoMLX checkpoints (a directory with .json and .bin files): the weights under
//     scope "/params", Adam moments under "/adam_m" and "/adam_v", and "/meta/config" =
//     [Vocab, MaxLen, DModel, Heads, Layers, MLP, step] (int64).
//   - WriteTo/ReadModel (ReadCritic) write one deterministic stream, bit-exact (for a
//     content-addressed result cache): magic, kind, config, step, then every tensor (weights, first
//     moments, second moments, in spec order) as name, dims and little-endian float32 values.

const (
	streamMagic  = "GOMLXTA1"
	kindPolicy   = "policy"
	kindCritic   = "critic"
	maxNameBytes = 1 << 10
)

// --- single stream ---

type countingWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (c *countingWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
}

func (c *countingWriter) u64(x uint64) { c.write(binary.LittleEndian.AppendUint64(nil, x)) }

func (c *countingWriter) str(s string) {
	c.u64(uint64(len(s)))
	c.write([]byte(s))
}

func writeState(w io.Writer, kind string, st *netState) (int64, error) {
	cw := &countingWriter{w: bufio.NewWriter(w)}
	cw.write([]byte(streamMagic))
	cw.str(kind)
	cfg := st.cfg
	for _, x := range []int{cfg.Vocab, cfg.MaxLen, cfg.DModel, cfg.Heads, cfg.Layers, cfg.MLP} {
		cw.u64(uint64(x))
	}
	cw.u64(uint64(st.step))
	for _, group := range [][]*tensors.Tensor{st.params, st.m, st.v} {
		for i, t := range group {
			s := st.specs[i]
			cw.str(s.Name)
			cw.u64(uint64(len(s.Dims)))
			for _, d := range s.Dims {
				cw.u64(uint64(d))
			}
			data, err := floatsCopy(t)
			if err != nil {
				return cw.n, err
			}
			buf := make([]byte, 4*len(data))
			for j, x := range data {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
			}
			cw.write(buf)
		}
	}
	if cw.err == nil {
		cw.err = cw.w.Flush()
	}
	return cw.n, cw.err
}

type reader struct {
	r   io.Reader
	err error
}

func (r *reader) read(n int) []byte {
	if r.err != nil {
		return nil
	}
	b := make([]byte, n)
	_, r.err = io.ReadFull(r.r, b)
	return b
}

func (r *reader) u64() uint64 {
	b := r.read(8)
	if r.err != nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (r *reader) str() string {
	n := r.u64()
	if r.err == nil && n > maxNameBytes {
		r.err = fmt.Errorf("name of %d bytes", n)
	}
	return string(r.read(int(n)))
}

func readState(rd io.Reader, wantKind string) (*netState, error) {
	r := &reader{r: bufio.NewReader(rd)}
	if magic := string(r.read(len(streamMagic))); r.err == nil && magic != streamMagic {
		return nil, fmt.Errorf("gomlxmodel: not a model stream (magic %q)", magic)
	}
	if kind := r.str(); r.err == nil && kind != wantKind {
		return nil, fmt.Errorf("gomlxmodel: stream holds a %s, want a %s", kind, wantKind)
	}
	var dims [7]int
	for i := range dims {
		dims[i] = int(r.u64())
	}
	if r.err != nil {
		return nil, fmt.Errorf("gomlxmodel: reading model header: %w", r.err)
	}
	cfg := Config{Vocab: dims[0], MaxLen: dims[1], DModel: dims[2], Heads: dims[3], Layers: dims[4], MLP: dims[5]}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	specs := policySpecs(cfg)
	if wantKind == kindCritic {
		specs = criticSpecs(cfg)
	}
	st := &netState{cfg: cfg, specs: specs, step: int64(dims[6])}
	for g := range 3 {
		for _, s := range specs {
			name := r.str()
			rank := int(r.u64())
			if r.err == nil && (name != s.Name || rank != len(s.Dims)) {
				return nil, fmt.Errorf("gomlxmodel: stream tensor %q of rank %d, want %q of rank %d", name, rank, s.Name, len(s.Dims))
			}
			for _, d := range s.Dims {
				if got := int(r.u64()); r.err == nil && got != d {
					return nil, fmt.Errorf("gomlxmodel: stream tensor %q has dims differing from %v", name, s.Dims)
				}
			}
			buf := r.read(4 * s.size())
			if r.err != nil {
				return nil, fmt.Errorf("gomlxmodel: reading tensor %q: %w", s.Name, r.err)
			}
			data := make([]float32, s.size())
			for j := range data {
				data[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
			}
			t := f32Tensor(data, s.Dims...)
			switch g {
			case 0:
				st.params = append(st.params, t)
			case 1:
				st.m = append(st.m, t)
			default:
				st.v = append(st.v, t)
			}
		}
	}
	return st, nil
}

// WriteTo writes the model (config, weights, Adam state) as one deterministic stream: equal models
// give equal bytes, and ReadModel restores it bit for bit.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return writeState(w, kindPolicy, m.st)
}

// ReadModel reads a model written by Model.WriteTo.
func ReadModel(r io.Reader) (*Model, error) {
	st, err := readState(r, kindPolicy)
	if err != nil {
		return nil, err
	}
	return &Model{st: st}, nil
}

// WriteTo writes the critic like Model.WriteTo.
func (c *Critic) WriteTo(w io.Writer) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return writeState(w, kindCritic, c.st)
}

// ReadCritic reads a critic written by Critic.WriteTo.
func ReadCritic(r io.Reader) (*Critic, error) {
	st, err := readState(r, kindCritic)
	if err != nil {
		return nil, err
	}
	return &Critic{st: st}, nil
}

// --- GoMLX checkpoints ---

func splitName(name string) (scope, base string) {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i], name[i+1:]
	}
	return "", name
}

func checkpointScopes() []string { return []string{"params", "adam_m", "adam_v"} }

// Save writes the model (weights, Adam state, config) as a GoMLX checkpoint in dir, keeping only
// the newest checkpoint there.
func (m *Model) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gomlxmodel: save: %w", err)
	}
	ctx := context.New()
	defer ctx.Finalize()
	h, err := checkpoints.Build(ctx).Dir(dir).Keep(1).Done()
	if err != nil {
		return fmt.Errorf("gomlxmodel: save to %s: %w", dir, err)
	}
	m.mu.Lock()
	st, err := m.st.clone()
	m.mu.Unlock()
	if err != nil {
		return err
	}
	set := func(scope, name string, t *tensors.Tensor) error {
		v := ctx.InAbsPath("/"+scope).Checked(false).VariableWithValue(name, t)
		if value, err := v.Value(); err == nil && value == t {
			return nil
		}
		// A value loaded from an older checkpoint in dir: override it.
		if err := v.SetValue(t); err != nil {
			return fmt.Errorf("gomlxmodel: save %s/%s: %w", scope, name, err)
		}
		return nil
	}
	cfg := st.cfg
	if err := set("meta", "config", tensors.FromValue([]int64{int64(cfg.Vocab), int64(cfg.MaxLen), int64(cfg.DModel),
		int64(cfg.Heads), int64(cfg.Layers), int64(cfg.MLP), st.step})); err != nil {
		return err
	}
	for g, group := range [][]*tensors.Tensor{st.params, st.m, st.v} {
		for i, t := range group {
			scope, name := splitName(st.specs[i].Name)
			if err := set(strings.TrimSuffix(checkpointScopes()[g]+"/"+scope, "/"), name, t); err != nil {
				return err
			}
		}
	}
	if err := h.Save(); err != nil {
		return fmt.Errorf("gomlxmodel: save to %s: %w", dir, err)
	}
	return nil
}

// Load reads the newest GoMLX checkpoint written by Model.Save in dir.
func Load(dir string) (*Model, error) {
	ctx := context.New()
	defer ctx.Finalize()
	if _, err := checkpoints.Load(ctx).Dir(dir).Immediate().Done(); err != nil {
		return nil, fmt.Errorf("gomlxmodel: load %s: %w", dir, err)
	}
	get := func(scope, name string) (*tensors.Tensor, error) {
		v := ctx.GetVariableByScopeAndName("/"+scope, name)
		if v == nil {
			return nil, fmt.Errorf("gomlxmodel: load %s: variable %s/%s missing", dir, scope, name)
		}
		return v.Value()
	}
	metaT, err := get("meta", "config")
	if err != nil {
		return nil, err
	}
	meta, err := tensors.CopyFlatData[int64](metaT)
	if err != nil || len(meta) != 7 {
		return nil, errors.Join(fmt.Errorf("gomlxmodel: load %s: bad meta/config", dir), err)
	}
	cfg := Config{Vocab: int(meta[0]), MaxLen: int(meta[1]), DModel: int(meta[2]), Heads: int(meta[3]),
		Layers: int(meta[4]), MLP: int(meta[5])}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st := &netState{cfg: cfg, specs: policySpecs(cfg), step: meta[6]}
	for g, dst := range []*[]*tensors.Tensor{&st.params, &st.m, &st.v} {
		for _, s := range st.specs {
			scope, name := splitName(s.Name)
			t, err := get(strings.TrimSuffix(checkpointScopes()[g]+"/"+scope, "/"), name)
			if err != nil {
				return nil, err
			}
			data, err := floatsCopy(t)
			if err != nil {
				return nil, err
			}
			if len(data) != s.size() {
				return nil, fmt.Errorf("gomlxmodel: load %s: %s has %d values, want %d", dir, s.Name, len(data), s.size())
			}
			*dst = append(*dst, f32Tensor(data, s.Dims...))
		}
	}
	return &Model{st: st}, nil
}
