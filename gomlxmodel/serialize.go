package gomlxmodel

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// WriteTo/ReadModel (ReadCritic) store a model as one deterministic stream, bit-exact (for a
// content-addressed result cache): magic, kind, config, step, then every tensor (weights, first
// moments, second moments, in spec order) as name, dims and little-endian float32 values. (The tests
// also write GoMLX checkpoints: Save/Load in checkpoint_test.go.)

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
	var buf []byte // one buffer for every tensor's bytes: resumable runs write their state after every step
	for _, group := range [][]*tensors.Tensor{st.params, st.m, st.v} {
		for i, t := range group {
			s := st.specs[i]
			cw.str(s.Name)
			cw.u64(uint64(len(s.Dims)))
			for _, d := range s.Dims {
				cw.u64(uint64(d))
			}
			err := tensors.ConstFlatData(t, func(data []float32) {
				buf = slices.Grow(buf[:0], 4*len(data))
				for _, x := range data {
					buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
				}
			})
			if err != nil {
				return cw.n, err
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

// float32sChunk is how many values float32s reads at a time.
const float32sChunk = 1 << 14

// float32s reads n little-endian float32 values. It reads them in chunks and grows the result as
// they arrive, so that a stream shorter than its header claims fails before a large allocation.
func (r *reader) float32s(n int) []float32 {
	if r.err != nil {
		return nil
	}
	data := make([]float32, 0, min(n, float32sChunk))
	buf := make([]byte, 4*min(n, float32sChunk))
	for len(data) < n {
		b := buf[:4*min(n-len(data), float32sChunk)]
		if _, r.err = io.ReadFull(r.r, b); r.err != nil {
			return nil
		}
		for j := 0; j < len(b); j += 4 {
			data = append(data, math.Float32frombits(binary.LittleEndian.Uint32(b[j:])))
		}
	}
	return data
}

// Upper bounds on a configuration read from a stream or a checkpoint: far above any TinyAgent, and low
// enough that a corrupt or crafted header is rejected before anything of its size is allocated.
const (
	maxStoredDim    = 1 << 20 // each of Vocab, MaxLen, DModel, Heads, Layers, MLP
	maxStoredParams = 1 << 31 // parameters of the network (each also has two Adam moments)
)

// checkStoredConfig validates a configuration read from a stream or a checkpoint holding a network of
// the given kind (kindPolicy or kindCritic): Validate, then the bounds maxStoredDim and
// maxStoredParams, computed without building the parameter list.
func checkStoredConfig(cfg Config, kind string) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"Vocab", cfg.Vocab}, {"MaxLen", cfg.MaxLen}, {"DModel", cfg.DModel}, {"Heads", cfg.Heads},
		{"Layers", cfg.Layers}, {"MLP", cfg.MLP}} {
		if d.v > maxStoredDim {
			return fmt.Errorf("gomlxmodel: stored configuration has %s %d > %d", d.name, d.v, maxStoredDim)
		}
	}
	one, none := cfg, cfg
	one.Layers, none.Layers = 1, 0
	head := policySpecs(none)
	if kind == kindCritic {
		head = criticSpecs(none)
	}
	fixed := countParams(head)                                               // ≤ 2^42: no overflow
	perLayer := countParams(trunkSpecs(one)) - countParams(trunkSpecs(none)) // ≤ 2^43
	if fixed > maxStoredParams || cfg.Layers > (maxStoredParams-fixed)/perLayer {
		return fmt.Errorf("gomlxmodel: stored configuration %+v has more than %d parameters", cfg, maxStoredParams)
	}
	return nil
}

func readState(eng *Engine, rd io.Reader, wantKind string) (*netState, error) {
	if eng == nil {
		return nil, errNoEngine
	}
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
	if err := checkStoredConfig(cfg, wantKind); err != nil {
		return nil, err
	}
	if dims[6] < 0 {
		return nil, fmt.Errorf("gomlxmodel: stream header has a negative step count %d", dims[6])
	}
	specs := policySpecs(cfg)
	if wantKind == kindCritic {
		specs = criticSpecs(cfg)
	}
	st := &netState{eng: eng, cfg: cfg, specs: specs, step: int64(dims[6])}
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
			data := r.float32s(s.size())
			if r.err != nil {
				return nil, fmt.Errorf("gomlxmodel: reading tensor %q: %w", s.Name, r.err)
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

// ReadModel reads a model written by Model.WriteTo, computing on eng.
func ReadModel(eng *Engine, r io.Reader) (*Model, error) {
	st, err := readState(eng, r, kindPolicy)
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

// ReadCritic reads a critic written by Critic.WriteTo, computing on eng.
func ReadCritic(eng *Engine, r io.Reader) (*Critic, error) {
	st, err := readState(eng, r, kindCritic)
	if err != nil {
		return nil, err
	}
	return &Critic{st: st}, nil
}
