package runs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"

	"github.com/agentrl-go/agentrl/agentrl"
)

// The record of a step. A verified store keeps a record of a computation's first step beside its result and
// compares it with the same step computed again before it serves the result (store.Resumable): the record must be
// the same bytes in every process that computes the same step, whatever that process ran before, and where two
// records differ the store names the parts that differ (store.RecordDiffers).

// The parts of a record, one "name=digest" line each, in this order.
const (
	partWeights   = "weights"                    // the policy's (and the critic's) configuration and weights
	partOptimizer = "optimizer moments"          // their Adam step counts and first and second moments
	partStats     = "statistics and episode log" // the run's history, episode log and metrics
	partGenerator = "generator state"            // the run generator's state: how much the steps drew
)

// stepRecord is the record of a run's state after a step that a verified store keeps: a line "name=hex SHA-256"
// for each part of what the run then holds, the weights after the update, the optimizer moments, the step's
// statistics and episode log (what the sampled batch was) and the generator's state (how much the step drew). Each
// digest reads the values themselves, never an encoding whose bytes depend on the process, such as the
// checkpoint's (encodeState), whose gob section holds type numbers that a process assigns in the order it first
// encodes each type.
func stepRecord(run *agentrl.Run, src *rand.PCG) ([]byte, error) {
	weights, optimizer := sha256.New(), sha256.New()
	if err := splitState(run.Policy, weights, optimizer); err != nil {
		return nil, fmt.Errorf("runs: the record of the policy: %w", err)
	}
	if run.Critic != nil {
		weights.Write([]byte("critic")) // a run with a critic records otherwise than one without
		if err := splitState(run.Critic, weights, optimizer); err != nil {
			return nil, fmt.Errorf("runs: the record of the critic: %w", err)
		}
	}
	stats := sha256.New()
	metrics := make([]string, 0, len(run.Metrics))
	for name := range run.Metrics {
		metrics = append(metrics, name)
	}
	slices.Sort(metrics)
	for _, v := range []any{run.History, run.Log, run.LogTask, metrics} {
		if err := writeValue(stats, reflect.ValueOf(v)); err != nil {
			return nil, fmt.Errorf("runs: the record of the statistics: %w", err)
		}
	}
	for _, name := range metrics {
		if err := writeValue(stats, reflect.ValueOf(run.Metrics[name])); err != nil {
			return nil, fmt.Errorf("runs: the record of metric %s: %w", name, err)
		}
	}
	rng, err := src.MarshalBinary()
	if err != nil {
		return nil, err
	}
	generator := sha256.New()
	generator.Write(rng)
	var record bytes.Buffer
	for _, p := range []struct {
		name string
		h    hash.Hash
	}{{partWeights, weights}, {partOptimizer, optimizer}, {partStats, stats}, {partGenerator, generator}} {
		fmt.Fprintf(&record, "%s=%x\n", p.name, p.h.Sum(nil))
	}
	return record.Bytes(), nil
}

// modelMagic starts a model's stream.
const modelMagic = "GOMLXTA1"

// splitState writes the stream of a model or critic (gomlxmodel.Model.WriteTo: magic, kind, configuration, step
// count, then every tensor as its name, dims and float32 values: the weights, then the first and the second
// moments, as many of each) to weights (the magic, kind, configuration and weights) and optimizer (the step count
// and the moments).
func splitState(net io.WriterTo, weights, optimizer io.Writer) error {
	var buf bytes.Buffer
	if _, err := net.WriteTo(&buf); err != nil {
		return err
	}
	b := buf.Bytes()
	off, ok := len(modelMagic), bytes.HasPrefix(b, []byte(modelMagic))
	next := func(n uint64) []byte { // the next n bytes of the stream
		if !ok || n > uint64(len(b)-off) {
			ok = false
			return nil
		}
		off += int(n)
		return b[off-int(n) : off]
	}
	u64 := func() uint64 {
		if x := next(8); ok {
			return binary.LittleEndian.Uint64(x)
		}
		return 0
	}
	next(u64())   // kind
	for range 6 { // configuration
		u64()
	}
	header := off
	u64() // step count
	counted := off
	var ends []int // where each tensor ends
	for ok && off < len(b) {
		next(u64()) // name
		size := uint64(4)
		for rank := u64(); ok && rank > 0; rank-- {
			size *= u64()
		}
		next(size)
		ends = append(ends, off)
	}
	if !ok || len(ends) == 0 || len(ends)%3 != 0 {
		return errors.New("not a model stream of weights and two moments")
	}
	params := ends[len(ends)/3-1]
	for _, part := range []struct {
		w    io.Writer
		data []byte
	}{{weights, b[:header]}, {weights, b[counted:params]}, {optimizer, b[header:counted]}, {optimizer, b[params:]}} {
		if _, err := part.w.Write(part.data); err != nil {
			return err
		}
	}
	return nil
}

// writeValue writes v to w exactly and the same in every process: booleans and numbers as 8 little-endian bytes
// (integers as int64 or uint64, floats by their bits), strings and slices as their length, then their bytes or
// elements, arrays element by element, structs field by field. Other kinds are an error.
func writeValue(w io.Writer, v reflect.Value) error {
	u64 := func(x uint64) error { return binary.Write(w, binary.LittleEndian, x) }
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return u64(1)
		}
		return u64(0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return u64(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return u64(v.Uint())
	case reflect.Float32:
		return u64(uint64(math.Float32bits(float32(v.Float()))))
	case reflect.Float64:
		return u64(math.Float64bits(v.Float()))
	case reflect.String:
		if err := u64(uint64(v.Len())); err != nil {
			return err
		}
		_, err := io.WriteString(w, v.String())
		return err
	case reflect.Slice:
		if err := u64(uint64(v.Len())); err != nil {
			return err
		}
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			if err := writeValue(w, v.Index(i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Struct:
		for i := range v.NumField() {
			if err := writeValue(w, v.Field(i)); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("cannot record a value of kind %s (%s)", v.Kind(), v.Type())
}
