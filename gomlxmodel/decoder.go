package gomlxmodel

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Decoder samples incrementally from a Model with a KV cache for B rows. Feed queues tokens per
// row (a prefill of prompt or observation tokens, or the token just sampled); Step runs all queued
// tokens of all rows in one graph and returns each row's next-token logits. Logits equal the full
// forward pass (TestDecoderMatchesForward).
//
// Shapes are bucketed so decoding never recompiles per step: the cache capacity grows in steps of
// TimeBucket, the number of tokens per Step is padded to 1, 4, 16, 64 or 256, and B as in Logits.
// A Decoder is not safe for concurrent use; it reads the model's current weights at each Step.
type Decoder struct {
	m      *Model
	B, bp  int
	L      int               // cache capacity (positions)
	caches []*tensors.Tensor // per layer: keys [bp, H, L, dh], values [bp, H, dh, L]
	lens   []int             // cached tokens per row
	reset  []bool            // rows whose cache slots must be zeroed before the next Step
	queue  [][]int32         // tokens waiting for the next Step, per row
}

// NewDecoder returns a decoder with B empty rows.
func (m *Model) NewDecoder(B int) (*Decoder, error) {
	if B < 1 {
		return nil, fmt.Errorf("gomlxmodel: decoder needs B ≥ 1, got %d", B)
	}
	d := &Decoder{m: m, B: B, bp: bucketB(B), lens: make([]int, B), reset: make([]bool, B), queue: make([][]int32, B)}
	d.grow(min(TimeBucket, m.st.cfg.MaxLen))
	return d, nil
}

// grow reallocates the caches with capacity L, keeping their contents.
func (d *Decoder) grow(L int) {
	cfg := d.m.st.cfg
	H, dh := cfg.Heads, cfg.DModel/cfg.Heads
	old, oldL := d.caches, d.L
	d.caches = make([]*tensors.Tensor, 2*cfg.Layers)
	for i := range d.caches {
		data := make([]float32, d.bp*H*dh*L)
		if old != nil {
			prev, _ := floats(old[i])
			for bh := range d.bp * H {
				if i%2 == 0 { // keys [.., L, dh]: the first oldL·dh values of each (b, h)
					copy(data[bh*L*dh:bh*L*dh+oldL*dh], prev[bh*oldL*dh:(bh+1)*oldL*dh])
				} else { // values [.., dh, L]: each of dh rows grows from oldL to L
					for e := range dh {
						copy(data[(bh*dh+e)*L:(bh*dh+e)*L+oldL], prev[(bh*dh+e)*oldL:(bh*dh+e+1)*oldL])
					}
				}
			}
		}
		if i%2 == 0 {
			d.caches[i] = f32Tensor(data, d.bp, H, L, dh)
		} else {
			d.caches[i] = f32Tensor(data, d.bp, H, dh, L)
		}
	}
	d.L = L
}

// zeroResetRows clears the cache slots of rows reset since the last Step: the decode graph adds new
// entries to the cache and relies on unused slots being zero.
func (d *Decoder) zeroResetRows() error {
	var rows []int
	for b, r := range d.reset {
		if r {
			rows = append(rows, b)
			d.reset[b] = false
		}
	}
	if len(rows) == 0 {
		return nil
	}
	for _, t := range d.caches {
		rowSize := t.Shape().Size() / d.bp
		err := tensors.MutableFlatData(t, func(flat []float32) {
			for _, b := range rows {
				clear(flat[b*rowSize : (b+1)*rowSize])
			}
		})
		if err != nil {
			return fmt.Errorf("gomlxmodel: decoder reset: %w", err)
		}
	}
	return nil
}

// Feed queues tokens for row (prefill, or the token sampled last); they run at the next Step.
func (d *Decoder) Feed(row int, tokens []int32) {
	d.queue[row] = append(d.queue[row], tokens...)
}

// ResetRow forgets a row's cache and queue (for per-call context views).
func (d *Decoder) ResetRow(row int) {
	if d.lens[row] > 0 {
		d.reset[row] = true
	}
	d.lens[row] = 0
	d.queue[row] = d.queue[row][:0]
}

// Len returns the number of tokens in a row's context: cached plus queued.
func (d *Decoder) Len(row int) int { return d.lens[row] + len(d.queue[row]) }

// stepBucket pads the number of tokens per Step.
func stepBucket(n, maxLen int) int {
	for _, b := range []int{1, 4, 16, 64, 256} {
		if n <= b {
			return min(b, maxLen)
		}
	}
	return n
}

// Step runs every queued token and returns logits [B·V]: for each row, the logits after its last
// queued token (zeros for rows with nothing queued).
func (d *Decoder) Step() ([]float32, error) {
	cfg := d.m.st.cfg
	n, need := 0, 0
	for b, q := range d.queue {
		n = max(n, len(q))
		need = max(need, d.lens[b]+len(q))
		for _, id := range q {
			if id < 0 || int(id) >= cfg.Vocab {
				return nil, fmt.Errorf("gomlxmodel: decoder row %d: token id %d outside vocabulary of %d", b, id, cfg.Vocab)
			}
		}
	}
	V := cfg.Vocab
	if n == 0 {
		return make([]float32, d.B*V), nil
	}
	if need > cfg.MaxLen {
		return nil, fmt.Errorf("gomlxmodel: decoder context of %d tokens exceeds MaxLen %d", need, cfg.MaxLen)
	}
	if L := bucketT(need, cfg.MaxLen); L > d.L {
		d.grow(L)
	}
	if err := d.zeroResetRows(); err != nil {
		return nil, err
	}
	nb := stepBucket(n, cfg.MaxLen)
	tokens := make([]int32, d.bp*nb)
	start := make([]int32, d.bp)
	count := make([]int32, d.bp)
	for b, q := range d.queue {
		copy(tokens[b*nb:], q)
		start[b], count[b] = int32(d.lens[b]), int32(len(q))
	}
	e, err := getExec(cfg, kindDecode, buildDecode(cfg))
	if err != nil {
		return nil, err
	}
	backend, err := Backend()
	if err != nil {
		return nil, err
	}
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	args := d.m.st.paramArgs()
	for _, t := range d.caches {
		donated, err := graph.DonateTensorBuffer(t, backend, 0)
		if err != nil {
			return nil, fmt.Errorf("gomlxmodel: decoder: %w", err)
		}
		args = append(args, donated)
	}
	args = append(args, i32Tensor(tokens, d.bp, nb), i32Tensor(start, d.bp), i32Tensor(count, d.bp))
	out, err := run(e, kindDecode, args)
	if err != nil {
		d.caches = nil // donated: the decoder is unusable
		return nil, err
	}
	copy(d.caches, out[1:])
	logits, err := floats(out[0])
	if err != nil {
		return nil, err
	}
	logits = logits[:d.B*V]
	for b, q := range d.queue {
		if len(q) == 0 {
			clear(logits[b*V : (b+1)*V])
		}
		d.lens[b] += len(q)
		d.queue[b] = q[:0]
	}
	return logits, nil
}
