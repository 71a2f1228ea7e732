package gomlxmodel

import (
	"cmp"
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Decoder samples incrementally from a Model with a KV cache for B rows. Feed queues tokens per
// row (a prefill of prompt or observation tokens, or the token just sampled); Step runs all queued
// tokens and returns each row's next-token logits. Logits equal the full forward pass
// (TestDecoderMatchesForward).
//
// A Step runs the rows with one queued token apart from those that prefill, which run in groups of
// the same token bucket (splitBucket), and leaves out rows with nothing queued. On XLA, where every
// shape of a graph costs a compilation, the executions are padded to a few shapes (fewShapes: rows in
// powers of two, a cache capacity in powers of two, caches of splitPageRows rows, a decoder of more
// rows keeping them in pages of that many); on the pure-Go backend the cache grows in steps of
// TimeBucket and B is bucketed as in Logits. The tests' padded oracle (one graph over all rows per
// Step, the tokens per row padded to stepBucket) is the schedule the split is checked against. A
// Decoder is not safe for concurrent use; it reads the model's current weights at each Step. Close
// frees its caches once it is no longer needed.
type Decoder struct {
	m      *Model
	nRows  int               // B, the number of rows (read-only: Rows)
	bp     int               // B bucketed
	L      int               // cache capacity (positions)
	caches []*tensors.Tensor // per layer: keys [bp, H, L, dh], values [bp, H, dh, L]
	lens   []int             // cached tokens per row
	queue  [][]int32         // tokens waiting for the next Step, per row
	// splitPrefill runs the rows with a long queue apart from those with one token, and leaves out
	// rows with nothing queued (see Step): every decoder but the tests' padded oracle. On pure Go it
	// keeps the padded graph's bits (TestDecoderScheduleBits); on XLA, whose code for a graph depends
	// on its shapes, it is its own realization.
	splitPrefill bool
	// buckets are the split's token buckets on this backend (splitPow2 or splitLadder).
	buckets []int
	// fewShapes pads the split's executions to a small set of shapes (rowBucket, cacheLen, and caches
	// of splitPageRows rows): set for the split on XLA, where every shape of a graph costs a compilation
	// (or a load from the executable cache, in every process).
	fewShapes bool
	// pages, with fewShapes and more than splitPageRows rows, are the decoders of consecutive blocks of
	// splitPageRows rows (the last one fewer) that hold this decoder's rows; Feed, ResetRow, Len, Step,
	// Positions and Close act on them.
	pages []*Decoder
	// executed and needed count token positions: rows × token slots of every execution, and the
	// tokens fed (Positions).
	executed, needed int
}

// Positions reports the decoder's token positions so far: executed is the sum over its executions of
// graph rows × token slots (padding included), needed the number of tokens it was fed and ran.
func (d *Decoder) Positions() (executed, needed int) {
	executed, needed = d.executed, d.needed
	for _, p := range d.pages {
		e, n := p.Positions()
		executed, needed = executed+e, needed+n
	}
	return executed, needed
}

// NewDecoder returns a decoder with B empty rows.
func (m *Model) NewDecoder(B int) (*Decoder, error) {
	if B < 1 {
		return nil, fmt.Errorf("gomlxmodel: decoder needs B ≥ 1, got %d", B)
	}
	eng := m.st.eng
	d := &Decoder{m: m, nRows: B}
	d.splitPrefill = !eng.sched.paddedDecode
	d.buckets = splitLadder
	if eng.pureGo {
		d.buckets = splitPow2
	}
	d.fewShapes = d.splitPrefill && !eng.pureGo
	if d.fewShapes && B > splitPageRows {
		for first := 0; first < B; first += splitPageRows {
			p, err := m.NewDecoder(min(splitPageRows, B-first))
			if err != nil {
				d.Close()
				return nil, err
			}
			d.pages = append(d.pages, p)
		}
		return d, nil
	}
	d.bp, d.lens, d.queue = bucketB(B), make([]int, B), make([][]int32, B)
	if d.fewShapes {
		d.bp = splitPageRows
	}
	if err := d.grow(d.cacheLen(1)); err != nil {
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
	for _, p := range d.pages {
		p.Close()
	}
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
	backend := d.m.st.eng.backend
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
	if d.pages != nil {
		d.pages[row/splitPageRows].Feed(row%splitPageRows, tokens)
		return
	}
	d.queue[row] = append(d.queue[row], tokens...)
}

// ResetRow forgets a row's cache and queue (for per-call context views). row must be in [0, Rows()):
// another row is a programmer error and panics (index out of range).
func (d *Decoder) ResetRow(row int) {
	if d.pages != nil {
		d.pages[row/splitPageRows].ResetRow(row % splitPageRows)
		return
	}
	d.lens[row] = 0
	d.queue[row] = d.queue[row][:0]
}

// Len returns the number of tokens in a row's context: cached plus queued. row must be in
// [0, Rows()): another row is a programmer error and panics (index out of range).
func (d *Decoder) Len(row int) int {
	if d.pages != nil {
		return d.pages[row/splitPageRows].Len(row % splitPageRows)
	}
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

// Token buckets of the split's prefills. On the pure-Go backend they are powers of two (1, 2 and 3 tokens to
// 4), where a row's logits and keys are the same, bit for bit, in every power-of-two bucket that holds its queue
// (TestDecoderScheduleBits: other sizes change the last bits), so they keep stepBucket's bits. On XLA, whose code
// depends on the shapes anyway, the midpoints from 8 on are buckets too (12, 24, 48, ...): a queue is padded by at
// most half its length, with at most 12 token shapes up to 256.
var (
	splitPow2   = []int{4, 8, 16, 32, 64, 128, 256}
	splitLadder = []int{4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256}
)

// splitBucket pads a prefilling row's queue of n tokens to the next of buckets, capped at maxLen; above the last
// bucket it returns n itself, as stepBucket does.
func splitBucket(n, maxLen int, buckets []int) int {
	for _, b := range buckets {
		if n <= b {
			return min(b, maxLen)
		}
	}
	return n
}

// Step runs every queued token and returns logits [B·V]: for each row, the logits after its last
// queued token (zeros for rows with nothing queued).
func (d *Decoder) Step() ([]float32, error) {
	if d.pages != nil {
		logits := make([]float32, 0, d.nRows*d.m.st.cfg.Vocab)
		for _, p := range d.pages {
			l, err := p.Step()
			if err != nil {
				return nil, err
			}
			logits = append(logits, l...)
		}
		return logits, nil
	}
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
	// The cache grows (cacheLen). Allocating it once at MaxLen and slicing the positions a graph needs
	// (the only way to keep XLA's bits, which depend on the attention's length) measured slower on both
	// backends: the slice copies the caches at every Step, a growth only every few.
	if L := d.cacheLen(need); L > d.L {
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
	if d.splitPrefill {
		if err := d.runSplit(single, prefill, logits); err != nil {
			return nil, err
		}
	} else if err := d.run(append(single, prefill...), stepBucket(n, cfg.MaxLen), false, logits); err != nil {
		return nil, err
	}
	for b, q := range d.queue {
		d.lens[b] += len(q)
		d.queue[b] = q[:0]
	}
	return logits, nil
}

// runSplit is Step's split schedule: the rows with one queued token in one execution, then the prefilling rows
// in one execution per token bucket, shortest first (the order does not change any result).
func (d *Decoder) runSplit(single, prefill []int, logits []float32) error {
	maxLen := d.m.st.cfg.MaxLen
	if len(single) > 0 {
		if err := d.run(single, 1, d.rowBucket(len(single), 1) < d.bp, logits); err != nil {
			return err
		}
	}
	for len(prefill) > 0 {
		nb := maxLen + 257
		for _, b := range prefill {
			nb = min(nb, splitBucket(len(d.queue[b]), maxLen, d.buckets))
		}
		var group, rest []int
		for _, b := range prefill {
			if splitBucket(len(d.queue[b]), maxLen, d.buckets) == nb {
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

// The split's shapes on XLA (fewShapes). A decoding graph's shape is its rows × token slots × cache capacity,
// and a cold chapter compiles every shape its runs meet. Rows in powers of two (decoding rows at least
// splitMinDecodeRows) and a capacity that is a power of two of at least splitMinCache make a run meet a
// fraction of the shapes of bucketB's rows and capacities grown by TimeBucket, for a few more executed
// token positions (FINDINGS.md, "the split's shapes"). And since the caches' row count is a dimension of
// every decoding graph, every cache has splitPageRows rows: a decoder of fewer pads its caches to it, one of
// more keeps its rows in pages (decoders) of splitPageRows rows, so every batch size shares one set of shapes.
const (
	splitMinDecodeRows = 8
	splitMinCache      = 128
	splitPageRows      = 64
)

// rowBucket is the number of graph rows of an execution of n rows with nb token slots: bucketB(n), or
// with fewShapes the next power of two (at least splitMinDecodeRows for one slot); at most bp, where the
// full-batch graph runs instead.
func (d *Decoder) rowBucket(n, nb int) int {
	if !d.fewShapes {
		return bucketB(n)
	}
	r := pow2(n)
	if nb == 1 {
		r = max(r, splitMinDecodeRows)
	}
	return min(r, d.bp)
}

// cacheLen is the cache capacity for a context of need tokens: the next multiple of TimeBucket, or with
// fewShapes the next power of two of at least splitMinCache, capped at MaxLen. Pure Go keeps multiples of
// TimeBucket, whose bits its split was checked against (TestDecoderScheduleBits).
func (d *Decoder) cacheLen(need int) int {
	maxLen := d.m.st.cfg.MaxLen
	if d.fewShapes {
		return min(max(pow2(need), splitMinCache), maxLen)
	}
	return bucketT(need, maxLen)
}

// run decodes the queued tokens of rows, nb token slots per row, writes their new keys and values
// into the caches and their logits into logits [B·V]; it leaves the queues and lengths alone. Without gather the full-batch graph runs, row b in slot b (rows
// not listed get no tokens); with gather the row-gathering graph runs on the listed rows alone.
func (d *Decoder) run(rows []int, nb int, gather bool, logits []float32) error {
	cfg := d.m.st.cfg
	V := cfg.Vocab
	kind, build, R := kindDecode, buildDecode(cfg), d.bp
	if gather {
		kind, build, R = kindDecodeRows, buildDecodeRows(cfg), d.rowBucket(len(rows), nb)
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
	eng := d.m.st.eng
	e, err := eng.exec(cfg, kind, build)
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
	out, err := eng.run(e, kind, append(args, inputs...))
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
	eng.decodeExecuted.Add(int64(R * nb))
	eng.decodeNeeded.Add(int64(fed))
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
