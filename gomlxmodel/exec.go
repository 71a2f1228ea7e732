package gomlxmodel

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Executables are shared by every model (and clone) of the same Config: graphs take the weights
// as inputs, so only the values differ. Each graph.Exec compiles one executable per input shape,
// and bucketing keeps those few.

type execKey struct {
	cfg  Config
	kind string
}

var (
	execMu sync.Mutex
	execs  = map[execKey]*graph.Exec{}
)

// getExec returns the shared executor of the given kind, building it with build on first use.
func getExec(cfg Config, kind string, build func(inputs []*graph.Node) []*graph.Node) (*graph.Exec, error) {
	execMu.Lock()
	defer execMu.Unlock()
	key := execKey{cfg, kind}
	if e, ok := execs[key]; ok {
		return e, nil
	}
	backend, err := Backend()
	if err != nil {
		return nil, err
	}
	e, err := graph.NewExecAny(backend, build)
	if err != nil {
		return nil, fmt.Errorf("gomlxmodel: %s executor: %w", kind, err)
	}
	e.WithName(kind).SetMaxCache(-1)
	execs[key] = e
	return e, nil
}

// run executes e on the arguments and wraps its error. A call that meets a new combination of executor
// and argument shapes is one where GoMLX compiles; its time goes to CompileStats. When that makes more
// than MaxLiveGraphs compiled graphs, run releases them all after the call (releaseGraphs).
func run(e *graph.Exec, kind string, args []any) ([]*tensors.Tensor, error) {
	live.RLock()
	first, count := compiles.firstCall(e, args)
	start := time.Now()
	out, err := execUnlocked(e, args)
	if first {
		compiles.add(kind, time.Since(start))
	}
	live.RUnlock()
	if limit := int(maxLiveGraphs.Load()); first && limit > 0 && count > limit {
		releaseGraphs()
	}
	if err != nil {
		return nil, fmt.Errorf("gomlxmodel: %s: %w", kind, err)
	}
	return out, nil
}

// MaxLiveGraphs is the default bound on the compiled graphs a process keeps (SetMaxLiveGraphs). Every
// executable that XLA's CPU plugin compiles or loads keeps its machine code in memory mappings of its own
// (about 60), and Linux allows a process 65,530 mappings by default: a long process that meets ever new
// shapes (many runs of different configurations, each with the split decoder's buckets) would otherwise
// fail in LLVM with "Cannot allocate memory" after about a thousand graphs.
const MaxLiveGraphs = 256

var (
	maxLiveGraphs atomic.Int64
	// live is held for reading by every execution and for writing while releaseGraphs finalizes graphs.
	live sync.RWMutex
)

func init() { maxLiveGraphs.Store(MaxLiveGraphs) }

// SetMaxLiveGraphs bounds the compiled graphs the process keeps (0 or less: no bound) and returns the
// previous bound. Once a call compiles a graph beyond the bound, every executor's graphs are released
// (finalized) after that call, and later calls compile their shapes again: from the executable cache
// on XLA (xlacache), so a release costs loads, not compilations. Results are unchanged: a graph
// compiled again is the same program.
func SetMaxLiveGraphs(n int) int { return int(maxLiveGraphs.Swap(int64(n))) }

// releaseGraphs finalizes the compiled graphs of every executor, once no execution is running. The
// executors stay usable: GoMLX's Exec.Finalize (v0.26) empties an executor's cache of graphs, and its
// next call builds the graph for its shapes again (TestReleaseGraphs).
func releaseGraphs() {
	live.Lock()
	defer live.Unlock()
	execMu.Lock()
	defer execMu.Unlock()
	for _, e := range execs {
		e.Finalize()
	}
	compiles.mu.Lock()
	defer compiles.mu.Unlock()
	clear(compiles.seen)
	compiles.releases++
}

// execUnlocked executes e on a goroutine of its own. The caller may be locked to its OS thread: Go
// runs package initialization on the main goroutine locked to the main thread, and a GoNB cell
// computes its var declarations there (a cell's `var base = must(agentrl.MakeRLBase(tok))` trains
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

var compiles = compileLog{seen: map[string]bool{}, byKind: map[string]CompileStat{}}

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

// CompileStats reports the process's graph compilations so far.
func CompileStats() (graphs int, total time.Duration) {
	compiles.mu.Lock()
	defer compiles.mu.Unlock()
	for _, st := range compiles.byKind {
		graphs += st.Graphs
		total += st.Total
	}
	return graphs, total
}

// CompileStatsByKind reports the process's graph compilations so far per graph kind (such as
// "decode", "decode_rows" or "update_ppo").
func CompileStatsByKind() map[string]CompileStat {
	compiles.mu.Lock()
	defer compiles.mu.Unlock()
	return maps.Clone(compiles.byKind)
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
	e, err := getExec(s.cfg, kind, build)
	if err != nil {
		return nil, p, err
	}
	inputs := []any{i32Tensor(in, p.Bp, p.Tp)}
	if withTargets {
		inputs = append(inputs, i32Tensor(targets, p.Bp, p.Tp))
	}
	mu.Lock()
	out, err := run(e, kind, append(s.paramArgs(), inputs...))
	mu.Unlock()
	freeArgs(inputs)
	if err != nil {
		return nil, p, err
	}
	x, err := floats(out[0])
	freeTensors(out[1:])
	return x, p, err
}
