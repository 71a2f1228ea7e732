package gomlxmodel

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentrl-go/agentrl/internal/pjrt"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Engine is what models compute on: a GoMLX backend, the executors compiled on it, and the schedules its graphs
// follow, which together with the backend decide the bits of every result (Numerics). Make one at the program's
// edge (NewEngine) and give it to the models made there (New, ReadModel); a model's clones, critics and decoders
// compute on their model's engine. Executors are shared by every model and critic of one Config on an engine:
// graphs take the weights as inputs, so only the values differ. An Engine is safe for concurrent use.
type Engine struct {
	backend  backends.Backend
	pureGo   bool   // the backend is SimpleGo, where some schedules differ (Decoder.Step, packed updates)
	plugin   string // the PJRT plugin file an XLA backend loaded, where it is known; "" otherwise
	sched    schedule
	numerics Numerics

	mu    sync.Mutex
	execs map[execKey]*graph.Exec

	compiles compileLog
	maxLive  atomic.Int64
	// live is held for reading by every execution and for writing while releaseGraphs finalizes graphs.
	live sync.RWMutex

	decodeExecuted, decodeNeeded atomic.Int64 // DecodePositions
	updateExecuted, updateNeeded atomic.Int64 // UpdatePositions
}

// schedule is how an engine's graphs lay out their work; its zero value is the one every program uses. Only this
// package's tests choose another (export_test.go): the layouts the split decoder and the packed updates are
// checked against, and a smaller query chunk for block-causal attention.
type schedule struct {
	paddedDecode   bool // one padded graph per Decoder.Step over all rows
	paddedUpdates  bool // updates give the graphs the bucketed, right-padded rows
	attentionChunk int  // the query chunk of blockCausalAttention; 0 means defaultAttentionChunk
}

// errNoEngine is the error of a model asked to compute on no engine.
var errNoEngine = errors.New("gomlxmodel: no engine: make one with NewEngine and pass it")

// defaultAttentionChunk is the query chunk of blockCausalAttention.
const defaultAttentionChunk = 32

func (s schedule) chunk() int {
	if s.attentionChunk > 0 {
		return s.attentionChunk
	}
	return defaultAttentionChunk
}

// Options say which engine NewEngine makes. The zero value is the pure-Go backend with no executable cache;
// EnvOptions and DefaultOptions read what a program's environment asks for.
type Options struct {
	// Backend is a GoMLX backend configuration as GOMLX_BACKEND takes it ("go", "go:ops_sequential", "xla",
	// "xla:cpu", "xla:/abs/path/plugin.so"); "" chooses the XLA backend on the plugin installed in PJRTDir where
	// there is one, else DefaultBackendConfig. A bare "go" means DefaultBackendConfig (GoMLX's bounded worker
	// pool can deadlock on 2 CPUs; ask for it with an explicit option), and "xla" or "xla:cpu" use the installed
	// plugin where there is one. GoMLX is never asked to download a plugin.
	Backend string
	// PJRTDir is the folder of the installed PJRT CPU plugin ("": none).
	PJRTDir string
	// XLACache is the folder of the executable cache that an XLA backend on the installed plugin compiles
	// through (xlacache.go); "" for none.
	XLACache string
	// XLACacheMax bounds that folder, in bytes (0: no bound).
	XLACacheMax int64
	// XLATrace is a file to which the executable cache appends a line for each program it loads, waits for or
	// compiles (xlacache.Store.SetTrace); "" for none.
	XLATrace string
}

// EnvOptions reads the options from the environment: GOMLX_BACKEND, the plugin folder (pjrt.Dir), and the
// executable cache's folder (XLACacheDir; none where XLACacheEnv is "off"), bounded as XLACacheMaxEnv says, and
// its trace (XLATraceEnv).
func EnvOptions() Options {
	o := Options{Backend: os.Getenv(backends.ConfigEnvVar), PJRTDir: pjrt.Dir(), XLACacheMax: xlaCacheLimit(),
		XLATrace: os.Getenv(XLATraceEnv)}
	if xlaCacheOn() {
		o.XLACache = XLACacheDir()
	}
	return o
}

// DefaultOptions are EnvOptions with, where the environment names no cache folder and does not turn the cache
// off, the executable cache in the user cache folder: what a program a reader runs uses. Tests use EnvOptions,
// so that no test writes to the user's cache folder unless told to.
func DefaultOptions() Options {
	o := EnvOptions()
	if o.XLACache == "" && xlaCacheOn() {
		if dir, err := os.UserCacheDir(); err == nil {
			o.XLACache = filepath.Join(dir, "agentrl", "xla-executables")
		}
	}
	return o
}

// NewEngine makes the engine o describes. Where the XLA backend runs on the installed plugin, the process's
// executable cache is installed on it by the first engine that names a folder; later engines share it.
func NewEngine(o Options) (*Engine, error) {
	b, plugin, err := newBackend(o)
	if err != nil {
		return nil, err
	}
	return newEngine(b, plugin, schedule{}), nil
}

// newEngine wraps a backend; plugin is the PJRT plugin file it loaded, where known.
func newEngine(b backends.Backend, plugin string, s schedule) *Engine {
	e := &Engine{backend: b, pureGo: isPureGo(b), plugin: plugin, sched: s, execs: map[execKey]*graph.Exec{},
		compiles: compileLog{seen: map[string]bool{}, byKind: map[string]CompileStat{}}}
	e.maxLive.Store(MaxLiveGraphs)
	e.numerics = e.describe()
	return e
}

// Backend returns the engine's GoMLX backend.
func (e *Engine) Backend() backends.Backend { return e.backend }

// Numerics describes what besides the code decides the bits of the engine's results.
func (e *Engine) Numerics() Numerics { return e.numerics }

// NumericsKey is Numerics as one line: how a result key (codekey) holds the engine a result was computed on.
func (e *Engine) NumericsKey() string { return e.numerics.String() }

// String names the engine by its numerics.
func (e *Engine) String() string { return e.numerics.String() }

// execKey names an executor of an engine: its models' configuration and the graph's kind.
type execKey struct {
	cfg  Config
	kind string
}

// exec returns the engine's executor of the given kind for cfg, building it with build on first use.
func (e *Engine) exec(cfg Config, kind string, build func(inputs []*graph.Node) []*graph.Node) (*graph.Exec, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := execKey{cfg, kind}
	if x, ok := e.execs[key]; ok {
		return x, nil
	}
	x, err := graph.NewExecAny(e.backend, build)
	if err != nil {
		return nil, fmt.Errorf("gomlxmodel: %s executor: %w", kind, err)
	}
	x.WithName(kind).SetMaxCache(-1)
	e.execs[key] = x
	return x, nil
}

// run executes x on the arguments and wraps its error. A call that meets a new combination of executor and
// argument shapes is one where GoMLX compiles; its time goes to CompileStats. When that makes more than the
// engine's bound of live compiled graphs (SetMaxLiveGraphs), run releases them all after the call.
func (e *Engine) run(x *graph.Exec, kind string, args []any) ([]*tensors.Tensor, error) {
	e.live.RLock()
	first, count := e.compiles.firstCall(x, args)
	start := time.Now()
	out, err := execUnlocked(x, args)
	if first {
		e.compiles.add(kind, time.Since(start))
	}
	e.live.RUnlock()
	if limit := int(e.maxLive.Load()); first && limit > 0 && count > limit {
		e.releaseGraphs()
	}
	if err != nil {
		return nil, fmt.Errorf("gomlxmodel: %s: %w", kind, err)
	}
	return out, nil
}

// MaxLiveGraphs is the default bound on the compiled graphs an engine keeps (SetMaxLiveGraphs). Every executable
// that XLA's CPU plugin compiles or loads keeps its machine code in memory mappings of its own (about 60), and
// Linux allows a process 65,530 mappings by default: a long process that meets ever new shapes (many runs of
// different configurations, each with the split decoder's buckets) would otherwise fail in LLVM with "Cannot
// allocate memory" after about a thousand graphs.
const MaxLiveGraphs = 256

// SetMaxLiveGraphs bounds the compiled graphs the engine keeps (0 or less: no bound) and returns the previous
// bound. Once a call compiles a graph beyond the bound, every executor's graphs are released (finalized) after
// that call, and later calls compile their shapes again: from the executable cache on XLA, so a release costs
// loads, not compilations. Results are unchanged: a graph compiled again is the same program.
func (e *Engine) SetMaxLiveGraphs(n int) int { return int(e.maxLive.Swap(int64(n))) }

// releaseGraphs finalizes the compiled graphs of every executor, once no execution is running. The executors
// stay usable: GoMLX's Exec.Finalize (v0.26) empties an executor's cache of graphs, and its next call builds the
// graph for its shapes again (TestReleaseGraphs).
func (e *Engine) releaseGraphs() {
	e.live.Lock()
	defer e.live.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, x := range e.execs {
		x.Finalize()
	}
	e.compiles.mu.Lock()
	defer e.compiles.mu.Unlock()
	clear(e.compiles.seen)
	e.compiles.releases++
}

// CompileStats reports the engine's graph compilations so far.
func (e *Engine) CompileStats() (graphs int, total time.Duration) {
	e.compiles.mu.Lock()
	defer e.compiles.mu.Unlock()
	for _, st := range e.compiles.byKind {
		graphs += st.Graphs
		total += st.Total
	}
	return graphs, total
}

// CompileStatsByKind reports the engine's graph compilations so far per graph kind (such as "decode",
// "decode_rows" or "update_ppo").
func (e *Engine) CompileStatsByKind() map[string]CompileStat {
	e.compiles.mu.Lock()
	defer e.compiles.mu.Unlock()
	return maps.Clone(e.compiles.byKind)
}

// DecodePositions reports the token positions of every Decoder.Step on the engine so far: executed is the sum
// over executions of graph rows × token slots (padding included), needed the tokens fed.
func (e *Engine) DecodePositions() (executed, needed int64) {
	return e.decodeExecuted.Load(), e.decodeNeeded.Load()
}

// UpdatePositions reports the token positions of every Model.Update and Critic.Update on the engine so far:
// executed is the sum over their executions of rows × row length, needed the sum over their sequences of the
// positions up to the last one the loss reads (the causal prefix it depends on).
func (e *Engine) UpdatePositions() (executed, needed int64) {
	return e.updateExecuted.Load(), e.updateNeeded.Load()
}

// xlaCacheOn reports whether the environment leaves the executable cache on (XLACacheEnv).
func xlaCacheOn() bool {
	switch strings.ToLower(os.Getenv(XLACacheEnv)) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// xlaCacheLimit is the bound of the executable cache's folder in bytes: $AGENTRL_XLA_CACHE_MAX_MB MiB, else
// XLACacheDefaultMaxMB MiB; 0 (no bound) for a value of 0 or less.
func xlaCacheLimit() int64 {
	mb := int64(XLACacheDefaultMaxMB)
	if v, err := strconv.ParseInt(strings.TrimSpace(os.Getenv(XLACacheMaxEnv)), 10, 64); err == nil {
		mb = v
	}
	if mb <= 0 {
		return 0
	}
	return mb << 20
}
