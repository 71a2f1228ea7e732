// Package gomlxmodel holds TinyAgent, its critic, its losses and its optimizer step as GoMLX graphs.
//
// The package builds graphs only: no environment, no task, no printing. Weights live on the host as
// GoMLX tensors; every computation (forward pass, log-probabilities, a fused loss + gradient + Adam
// update, one KV-cache decode step) is one compiled graph whose executables are cached per shape and
// shared by all models of the same configuration.
package gomlxmodel

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/internal/pjrt"
	"github.com/gomlx/gomlx/backends"
	_ "github.com/gomlx/gomlx/backends/default" // registers "go" and, where available, "xla"
	"github.com/gomlx/gomlx/backends/simplego"
)

// This file is the only place that deals with the hazards of GoMLX v0.26.0 backends (on 2-CPU machines, where
// they show):
//
//   - With GOMLX_BACKEND unset, backends.New() picks "xla", which tries to download the PJRT plugin
//     from the internet and fails offline. We never call backends.New() without a setting: the default
//     is an installed PJRT plugin named by absolute path (no download, no search), else the pure-Go
//     backend, built directly with simplego.New.
//   - SimpleGo's worker pool is bounded (2×NumCPU slots) by default, and in its parallel op mode every
//     op occupies a slot while ops such as DotGeneral wait inside it for more slots: with 2 CPUs all
//     slots can end up waiting, a deadlock at 0% CPU (TestBackendNoHang reproduces it with
//     "go:ops_parallel"). With "parallelism=-1" the pool is unbounded: a task that asks for a worker
//     always gets a goroutine, so nothing waits for a slot and the deadlock cannot happen, while ops
//     still run in parallel and DotGeneral still splits its work. The split never changes the order
//     of a sum (contractions are never split across workers), so results are bit-identical to
//     "ops_sequential", which is 10-20% slower on 2 cores.
//   - Under `go test -race`, SimpleGo's parallel executor (this default) reports data races even for a
//     single-goroutine Update: simplego/exec.go reads execBuf.numUsed without execBuf.mu (line 430)
//     while a worker writes it under the lock (line 478), with follow-on reports on reused buffers. No
//     frame is in this package, and "go:ops_sequential" reports none. The race is GoMLX's and is
//     probably benign on amd64; weights after PPO steps are bit-identical under both modes, but that
//     rests on a read the Go memory model does not order. So a package that trains on the default
//     pure-Go backend cannot use -race as is: run such tests with GOMLX_BACKEND=go:ops_sequential. On
//     XLA, go-xla's internal pool (procPin) gives false positives under -race; build with
//     `-race -tags race_mu` there.
//   - SimpleGo's executor synchronizes with its workers op by op from the calling goroutine, which is
//     slow when that goroutine is locked to its OS thread, as GoNB's var initializers are; exec.go runs
//     every execution on a goroutine of its own (execUnlocked).
//   - The other hazards (no Pad/DynamicSlice/DynamicUpdateSlice, the O(N·in·out) gradient of
//     DotGeneral, the double scaling of layers.MultiHeadAttention) are avoided by construction in
//     the graph files: positions are gathered with Iota, KV caches are written on the host (kvcache.go),
//     the gradients of Rsqrt and Clamp (undefined in v0.26) are avoided, and matrix products that are
//     differentiated go through dot (layers.go) with hand-written gradients, as does block-causal
//     attention (chunked.go), whose slices SimpleGo could not differentiate.

// DefaultBackendConfig is the backend configuration an engine uses when its Options name none and no PJRT CPU
// plugin is installed: the pure-Go backend with an unbounded worker pool (see the hazards above).
const DefaultBackendConfig = simplego.BackendName + ":parallelism=-1"

// newBackend makes the backend o asks for (see Options.Backend) and returns the PJRT plugin file an XLA backend
// loads, where it is known.
func newBackend(o Options) (b backends.Backend, plugin string, err error) {
	config := o.Backend
	// backends.NewWithConfig panics on an unknown backend name.
	defer func() {
		if r := recover(); r != nil {
			b, plugin, err = nil, "", fmt.Errorf("gomlxmodel: backend %q: %v", config, r)
		}
	}()
	installed := installedPJRT(o.PJRTDir)
	if !xlaRegistered() {
		installed = "" // GoMLX builds its XLA backend only on some platforms (linux/amd64, darwin)
	}
	switch {
	case config == "" && installed != "",
		(config == "xla" || config == "xla:cpu") && installed != "" && os.Getenv("PJRT_PLUGIN_LIBRARY_PATH") == "":
		// Setting GOMLX_NO_AUTO_INSTALL or PJRT_PLUGIN_LIBRARY_PATH here would be too late: GoMLX and
		// go-xla read them in init(). An absolute plugin path skips both the auto-install (a download)
		// and the search; "shared_buffers" keeps what the plugin name "cpu" would have enabled.
		plugin = filepath.Join(installed, pjrt.PluginName)
		config = "xla:" + plugin + ",shared_buffers"
	case config == "" || config == simplego.BackendName:
		config = DefaultBackendConfig
	}
	name, opts := splitBackendConfig(config)
	if name == simplego.BackendName {
		b, err = newSimpleGo(opts)
		return b, "", err
	}
	if path, _, _ := strings.Cut(opts, ","); name == "xla" && filepath.IsAbs(path) {
		plugin = path
		if o.XLACache != "" {
			installXLACache(plugin, o.XLACache, o.XLACacheMax, o.XLATrace)
		}
	}
	b, err = backends.NewWithConfig(config)
	if err != nil {
		return nil, "", fmt.Errorf("gomlxmodel: backend %q: %w", config, err)
	}
	return b, plugin, nil
}

// xlaRegistered reports whether GoMLX's XLA backend is compiled into this program (pjrt.XLACompiledIn says the
// same without GoMLX, TestXLACompiledIn).
func xlaRegistered() bool {
	return slices.Contains(backends.List(), "xla")
}

// isPureGo reports whether b is the pure-Go backend (SimpleGo).
func isPureGo(b backends.Backend) bool {
	_, ok := b.(*simplego.Backend)
	return ok
}

// newSimpleGo builds the pure-Go backend. simplego.New prints a line to stdout when it is given a
// parallelism option, which every notebook cell that first touches a model would show; stdout is
// silenced while it runs (when an engine is made, before it has models). It does so by swapping the
// process-wide os.Stdout for /dev/null and back: a goroutine that prints meanwhile loses its output,
// and its read of os.Stdout races with the swap. simplego offers no other way to pass the option
// quietly; the swap lasts only for simplego.New.
func newSimpleGo(opts string) (backends.Backend, error) {
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		stdout := os.Stdout
		os.Stdout = null
		defer func() {
			os.Stdout = stdout
			_ = null.Close()
		}()
	}
	return simplego.New(opts)
}

func splitBackendConfig(config string) (name, opts string) {
	for i := range len(config) {
		if config[i] == ':' {
			return config[:i], config[i+1:]
		}
	}
	return config, ""
}
