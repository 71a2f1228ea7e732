package gomlxmodel

import (
	"cmp"
	"fmt"
	"sync/atomic"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Decoder samples incrementally from a Model with a KV cache for B rows. Feed queues tokens per
// row (a prefill of prompt or observation tokens, or the token just sampled); Step runs all queued
// tokens and returns each row's next-token logits. Logits equal the full forward pass
// (TestDecoderMatchesForward).
//
// Shapes are bucketed so decoding never recompiles per step: B is bucketed as in Logits, and the cache
// capacity grows in steps of TimeBucket (Step says why it is not allocated at once). How a Step groups
// rows into executions depends on the backend (goBackend): on XLA, one graph over all rows, the number
// of tokens per row padded to 1, 4, 16, 64 or 256 (stepBucket); on the pure-Go backend, the rows with
// one queued token run apart from those that prefill, which run in groups of the same token bucket
// (splitBucket), and rows with nothing queued are left out. A Decoder is not safe for concurrent use;
// it reads the model's current weights at each Step. Close frees its caches once it is no longer
// needed.
type Decoder struct {
	m      *Model
	nRows  int               // B, the number of rows (read-only: Rows)
	bp     int               // B bucketed
	L      int               // cache capacity (positions)
	caches []*tensors.Tensor // per layer: keys [bp, H, L, dh], values [bp, H, dh, L]
	lens   []int             // cached tokens per row
	queue  [][]int32         // tokens waiting for the next Step, per row
	// split runs the rows with a long queue apart from those with one token, and leaves out rows with
	// nothing queued (stepSplit). NewDecoder sets it on the pure-Go backend, where it keeps the padded
	// graph's logits bit for bit (TestDecoderSplitBits) and every padded token slot costs compute; on
	// XLA, whose compiled code depends on a graph's shapes, the split's logits would differ in the last
	// bits.
	split bool
	// executed and needed count token positions: rows × token slots of every execution, and the
	// tokens fed (Positions).
	executed, needed int
}

// Process-wide token positions of every decoder (DecodePositions).
var decodeExecuted, decodeNeeded atomic.Int64

// DecodePositions reports the token positions of every Decoder.Step of the process so far: executed is
// the sum over executions of graph rows × token slots (padding included), needed the tokens fed.
func DecodePositions() (executed, needed int64) {
	return decodeExecuted.Load(), decodeNeeded.Load()
}

// Positions reports the decoder's token positions so far: executed is the sum over its executions of
// graph rows × token slots (padding included), needed the number of tokens it was fed and ran.
func (d *Decoder) Positions() (executed, needed int) {
	return d.executed, d.needed
}

// NewDecoder returns a decoder with B empty rows.
func (m *Model) NewDecoder(B int) (*Decoder, error) {
	return m.newDecoder(B, pureGoBackend())
}

// newDecoder returns a decoder with B empty rows that splits prefilling rows from decoding ones (the
// pure-Go backend's schedule) or runs one padded graph per Step (XLA's), whatever the backend.
func (m *Model) newDecoder(B int, split bool) (*Decoder, error) {
	if B < 1 {
		return nil, fmt.Errorf("gomlxmodel: decoder needs B ≥ 1, got %d", B)
	}
	d := &Decoder{m: m, nRows: B, bp: bucketB(B), lens: make([]int, B), queue: make([][]int32, B), split: split}
	if err := d.grow(bucketT(1, m.st.cfg.MaxLen)); err != nil {
		return nil, err
	}
	return d, nil
}

// Rows returns B, the number of rows the decoder was made with.
func (d *Decoder) Rows() int { return d.nRows }

// Close frees the decoder's KV caches (host and device memory) now instead of at garbage collection:
// on XLA they are device buffers that the Go heap, and so GC pacing, does not see. After Close, Step
// returns an error; Feed, ResetRow and Len still work on the queues, and the model is not affected.
// Close is idempotent.
func (d *Decoder) Close() {
	freeTensors(d.caches)
	d.caches = nil
}

// grow reallocates the caches with capacity L, keeping their contents. Caches live in buffers shared
// with the backend where it allows (SimpleGo and XLA on CPU do), so the host writes new entries in
// place; elsewhere the tensors are copied to the device at each Step. A new cache is made on the
// device first and the old contents copied into it there: one buffer and one copy per cache.
func (d *Decoder) grow(L int) error {
	cfg := d.m.st.cfg
	H, dh := cfg.Heads, cfg.DModel/cfg.Heads
	backend, err := Backend()
	if err != nil {
		return err
	}
	old, oldL := d.caches, d.L
	caches := make([]*tensors.Tensor, 2*cfg.Layers)
	defer func() { freeTensors(caches) }() // those not kept on an error path
	for i := range caches {
		dims := []int{d.bp, H, L, dh} // keys
		if i%2 == 1 {
			dims = []int{d.bp, H, dh, L} // values
		}
		caches[i] = tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
		if err := caches[i].MaterializeOnDevice(backend, true, 0); err != nil {
			return fmt.Errorf("gomlxmodel: decoder cache: %w", err)
		}
		if old == nil {
			continue
		}
		var copyErr error
		err := tensors.MutableFlatData(caches[i], func(data []float32) {
			copyErr = tensors.ConstFlatData(old[i], func(prev []float32) {
				for bh := range d.bp * H {
					if i%2 == 0 { // keys [.., L, dh]: the first oldL·dh values of each (b, h)
						copy(data[bh*L*dh:bh*L*dh+oldL*dh], prev[bh*oldL*dh:(bh+1)*oldL*dh])
						continue
					}
					for e := range dh { // values [.., dh, L]: each of dh rows grows from oldL to L
						copy(data[(bh*dh+e)*L:(bh*dh+e)*L+oldL], prev[(bh*dh+e)*oldL:(bh*dh+e+1)*oldL])
					}
				}
			})
		})
		if err = cmp.Or(err, copyErr); err != nil {
			return fmt.Errorf("gomlxmodel: decoder cache: %w", err)
		}
	}
	freeTensors(old)
	d.caches, d.L = caches, L
	caches = nil
	return nil
}

// store writes the new keys and values of one layer ([R, H, nb, dh] each) into the caches: those of
// graph row slots[i] at positions start..start+count of cache row rows[i] (start and count by slot).
func (d *Decoder) store(layer int, kNew, vNew []float32, nb int, slots, rows []int, start, count []int32) error {
	cfg := d.m.st.cfg
	H, dh, L := cfg.Heads, cfg.DModel/cfg.Heads, d.L
	err := tensors.MutableFlatData(d.caches[2*layer], func(keys []float32) {
		for i, b := range rows {
			j := slots[i]
			for h := range H {
				for t := range int(count[j]) {
					src := ((j*H+h)*nb + t) * dh
					dst := ((b*H+h)*L + int(start[j]) + t) * dh
					copy(keys[dst:dst+dh], kNew[src:src+dh])
				}
			}
		}
	})
	if err != nil {
		return err
	}
	return tensors.MutableFlatData(d.caches[2*layer+1], func(values []float32) {
		for i, b := range rows {
			j := slots[i]
			for h := range H {
				for t := range int(count[j]) {
					src := ((j*H+h)*nb + t) * dh
					for e := range dh {
						values[((b*H+h)*dh+e)*L+int(start[j])+t] = vNew[src+e]
					}
				}
			}
		}
	})
}

// Feed queues tokens for row (prefill, or the token sampled last); they run at the next Step. row must
// be in [0, Rows()): another row is a programmer error and panics (index out of range).
func (d *Decoder) Feed(row int, tokens []int32) {
	d.queue[row] = append(d.queue[row], tokens...)
}

// ResetRow forgets a row's cache and queue (for per-call context views). row must be in [0, Rows()):
// another row is a programmer error and panics (index out of range).
func (d *Decoder) ResetRow(row int) {
	d.lens[row] = 0
	d.queue[row] = d.queue[row][:0]
}

// Len returns the number of tokens in a row's context: cached plus queued. row must be in
// [0, Rows()): another row is a programmer error and panics (index out of range).
func (d *Decoder) Len(row int) int {
	return d.lens[row] + len(d.queue[row])
}

// stepBucket pads the number of tokens per Step to 1, 4, 16, 64 or 256, capped at maxLen. Above 256
// (possible only when MaxLen > 256) it returns n itself: each distinct count of queued tokens then
// compiles a graph of its own.
func stepBucket(n, maxLen int) int {
	for _, b := range []int{1, 4, 16, 64, 256} {
		if n <= b {
			return min(b, maxLen)
		}
	}
	return n
}

// splitBuckets are the token buckets of the split's prefills: powers of two (1, 2 and 3 tokens to 4). On the
// pure-Go backend a row's logits and keys are the same, bit for bit, in every power-of-two bucket that holds its
// queue (TestDecoderSplitBits: other sizes change the last bits), so they keep stepBucket's bits.
var splitBuckets = []int{4, 8, 16, 32, 64, 128, 256}

// splitBucket pads a prefilling row's queue of n tokens to the next of splitBuckets, capped at maxLen; above the
// last bucket it returns n itself, as stepBucket does.
func splitBucket(n, maxLen int) int {
	for _, b := range splitBuckets {
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
	if d.caches == nil {
		return nil, fmt.Errorf("gomlxmodel: Step on a closed decoder")
	}
	if n == 0 {
		return make([]float32, d.nRows*V), nil
	}
	if need > cfg.MaxLen {
		return nil, fmt.Errorf("gomlxmodel: decoder context of %d tokens exceeds MaxLen %d", need, cfg.MaxLen)
	}
	// The cache grows in steps of TimeBucket. Allocating it once at MaxLen and slicing the positions a graph needs
	// (the only way to keep XLA's bits, which depend on the attention's length) measured slower on both
	// backends: the slice copies the caches at every Step, a growth only every few.
	if L := bucketT(need, cfg.MaxLen); L > d.L {
		if err := d.grow(L); err != nil {
			return nil, err
		}
	}
	logits := make([]float32, d.nRows*V)
	var single, prefill []int // rows with one queued token, rows with more
	for b, q := range d.queue {
		switch {
		case len(q) == 1:
			single = append(single, b)
		case len(q) > 1:
			prefill = append(prefill, b)
		}
	}
	var err error
	if d.split {
		err = d.stepSplit(single, prefill, logits)
	} else {
		err = d.run(append(single, prefill...), stepBucket(n, cfg.MaxLen), false, logits)
	}
	if err != nil {
		return nil, err
	}
	for b, q := range d.queue {
		d.lens[b] += len(q)
		d.queue[b] = q[:0]
	}
	return logits, nil
}

// stepSplit runs the rows with one queued token (single) in one execution of one token slot per row, and
// the rows with more (prefill) in one execution per token bucket (splitBucket), shortest first (the order
// changes no result); each execution's rows are bucketed as B is, and rows in neither list are left out.
func (d *Decoder) stepSplit(single, prefill []int, logits []float32) error {
	maxLen := d.m.st.cfg.MaxLen
	if len(single) > 0 {
		if err := d.run(single, 1, bucketB(len(single)) < d.bp, logits); err != nil {
			return err
		}
	}
	for len(prefill) > 0 {
		nb := maxLen + 257
		for _, b := range prefill {
			nb = min(nb, splitBucket(len(d.queue[b]), maxLen))
		}
		var group, rest []int
		for _, b := range prefill {
			if splitBucket(len(d.queue[b]), maxLen) == nb {
				group = append(group, b)
			} else {
				rest = append(rest, b)
			}
		}
		if err := d.run(group, nb, true, logits); err != nil {
			return err
		}
		prefill = rest
	}
	return nil
}

// run decodes the queued tokens of rows, nb token slots per row, writes their new keys and values
// into the caches and their logits into logits [B·V]; it leaves the queues and lengths alone. Without
// gather the full-batch graph runs, row b in slot b (rows not listed get no tokens); with gather the
// row-gathering graph runs on the listed rows alone, bucketed as B is.
func (d *Decoder) run(rows []int, nb int, gather bool, logits []float32) error {
	cfg := d.m.st.cfg
	V := cfg.Vocab
	kind, build, R := kindDecode, buildDecode(cfg), d.bp
	if gather {
		kind, build, R = kindDecodeRows, buildDecodeRows(cfg), bucketB(len(rows))
	}
	slots := make([]int, len(rows)) // graph row of each listed row
	tokens := make([]int32, R*nb)
	start := make([]int32, R)
	count := make([]int32, R)
	index := make([]int32, R) // cache row of each graph row (unused slots read row 0 and write nothing)
	for i, b := range rows {
		slot := b
		if gather {
			slot = i
		}
		slots[i] = slot
		copy(tokens[slot*nb:], d.queue[b])
		start[slot], count[slot], index[slot] = int32(d.lens[b]), int32(len(d.queue[b])), int32(b)
	}
	e, err := getExec(cfg, kind, build)
	if err != nil {
		return err
	}
	d.m.mu.Lock()
	args := d.m.st.paramArgs()
	for _, t := range d.caches {
		args = append(args, t)
	}
	inputs := []any{i32Tensor(tokens, R, nb), i32Tensor(start, R), i32Tensor(count, R)}
	if kind == kindDecodeRows {
		inputs = append(inputs, i32Tensor(index, R))
	}
	out, err := run(e, kind, append(args, inputs...))
	d.m.mu.Unlock()
	freeArgs(inputs)
	if err != nil {
		return err
	}
	fed := 0
	for _, b := range rows {
		fed += len(d.queue[b])
	}
	d.executed += R * nb
	d.needed += fed
	decodeExecuted.Add(int64(R * nb))
	decodeNeeded.Add(int64(fed))
	defer freeTensors(out) // those not freed by floats on an error path
	rowLogits, err := floats(out[0])
	if err != nil {
		return err
	}
	for l := range cfg.Layers {
		kNew, err := floats(out[1+2*l])
		if err != nil {
			return err
		}
		vNew, err := floats(out[2+2*l])
		if err != nil {
			return err
		}
		if err := d.store(l, kNew, vNew, nb, slots, rows, start, count); err != nil {
			return fmt.Errorf("gomlxmodel: decoder cache: %w", err)
		}
	}
	for i, b := range rows { // every listed row has queued tokens
		copy(logits[b*V:(b+1)*V], rowLogits[slots[i]*V:(slots[i]+1)*V])
	}
	return nil
}
