package gomlxmodel

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// execUnlocked executes e on a goroutine of its own. The caller may be locked to its OS thread: Go
// runs package initialization on the main goroutine locked to the main thread, and a GoNB cell
// computes its var declarations there (a cell's `var base = must(ch.Base())` trains
// the base agent during initialization). SimpleGo's executor, running on the calling goroutine,
// synchronizes with its workers op by op, and from a locked goroutine every synchronization hands
// the thread over: a base-agent step took 0.89 s in a var initializer and 0.68 s in main. A fresh
// goroutine is never locked; the caller then waits once per execution.
func execUnlocked(e *graph.Exec, args []any) (out []*tensors.Tensor, err error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic while executing %s: %v", e.Name(), r)
			}
		}()
		out, err = e.Exec(args...)
	}()
	<-done
	return out, err
}

// compileLog remembers the argument shapes each executor has run with.
type compileLog struct {
	mu       sync.Mutex
	seen     map[string]bool // executor and shapes of the live compiled graphs
	byKind   map[string]CompileStat
	releases int // times releaseGraphs ran
}

// firstCall reports whether e meets these argument shapes for the first time since its graphs were last
// released, and how many executor and shape pairs are live then.
func (c *compileLog) firstCall(e *graph.Exec, args []any) (first bool, live int) {
	var sig strings.Builder
	fmt.Fprintf(&sig, "%p", e)
	for _, a := range args {
		if t, ok := a.(*tensors.Tensor); ok {
			sig.WriteString(t.Shape().String())
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[sig.String()] {
		return false, len(c.seen)
	}
	c.seen[sig.String()] = true
	return true, len(c.seen)
}

func (c *compileLog) add(kind string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.byKind[kind]
	st.Graphs++
	st.Total += d
	c.byKind[kind] = st
}

// CompileStat counts graph compilations: executions that met a new executor and argument shape
// (GoMLX compiles on such a call), and their total wall time, which includes that one execution of
// the compiled graph.
type CompileStat struct {
	Graphs int
	Total  time.Duration
}

// floats copies a float32 tensor to the host and frees it.
func floats(t *tensors.Tensor) ([]float32, error) {
	v, err := tensors.CopyFlatData[float32](t)
	_ = t.FinalizeAll()
	return v, err
}

// floatsCopy copies a float32 tensor to the host, leaving it alive.
func floatsCopy(t *tensors.Tensor) ([]float32, error) {
	return tensors.CopyFlatData[float32](t)
}

// scalar reads a float32 scalar tensor and frees it.
func scalar(t *tensors.Tensor) (float64, error) {
	v, err := floats(t)
	if err != nil {
		return 0, fmt.Errorf("gomlxmodel: reading scalar: %w", err)
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("gomlxmodel: reading scalar: tensor holds %d values", len(v))
	}
	return float64(v[0]), nil
}

// freeTensors frees tensors now instead of at garbage collection (nil and already freed ones are
// skipped). run may free its per-call inputs as soon as it returns: both backends finish an
// execution before they return from it (go-xla awaits the device events), GoMLX donates no
// *tensors.Tensor argument, and an output is always a buffer of its own (SimpleGo copies an output
// it does not own; XLA aliases only donated inputs).
func freeTensors(ts []*tensors.Tensor) {
	for _, t := range ts {
		if t != nil {
			_ = t.FinalizeAll()
		}
	}
}

// freeArgs frees the tensors among executor arguments (see freeTensors); other values are left alone.
func freeArgs(args []any) {
	for _, a := range args {
		if t, ok := a.(*tensors.Tensor); ok && t != nil {
			_ = t.FinalizeAll()
		}
	}
}

func i32Tensor(x []int32, dims ...int) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(x, dims...)
}

func f32Tensor(x []float32, dims ...int) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(x, dims...)
}

// forward pads ids [B·T] to their bucket and runs the graph of kind on the network's parameters, the padded ids
// and, when withTargets, the padded next-token targets, holding mu while it reads the parameters. It returns
// the graph's first output and the padding, to cut the output back to B rows.
func (s *netState) forward(mu *sync.Mutex, kind string, build func([]*graph.Node) []*graph.Node, ids []int32, B, T int,
	withTargets bool) ([]float32, padded, error) {
	p, err := newPadded(B, T, s.cfg.MaxLen)
	if err != nil {
		return nil, p, err
	}
	in, targets, err := p.ids(ids, s.cfg.Vocab)
	if err != nil {
		return nil, p, err
	}
	e, err := s.eng.exec(s.cfg, kind, build)
	if err != nil {
		return nil, p, err
	}
	inputs := []any{i32Tensor(in, p.Bp, p.Tp)}
	if withTargets {
		inputs = append(inputs, i32Tensor(targets, p.Bp, p.Tp))
	}
	mu.Lock()
	out, err := s.eng.run(e, kind, append(s.paramArgs(), inputs...))
	mu.Unlock()
	freeArgs(inputs)
	if err != nil {
		return nil, p, err
	}
	x, err := floats(out[0])
	freeTensors(out[1:])
	return x, p, err
}
