//codekey:numerics

package gomlxmodel

import (
	"os"
	"runtime"
	"strconv"
)

// Numerics describes what, besides the code, decides the bits of an engine's results, read off the same settings
// that choose the computation: the backend; how the updates' graphs lay out their rows (packed rows, queries of
// the last block at read positions only, block-causal attention: each changes the order of floating-point
// sums); on the pure-Go backend, the architecture (Go fuses multiply-adds on some, such as arm64, and not on
// amd64); on XLA, the Processor its code is compiled for, the shapes its split decoders pad to, the plugin
// build and XLA_FLAGS. Result keys hold it (Engine.NumericsKey), and the notebook harness compares executed
// outputs exactly only with outputs committed under the same Numerics.
type Numerics struct {
	Backend        string // the GoMLX backend's name
	PackedUpdates  bool   // updates pack their rows, read the last block's queries at read positions only, and use block-causal attention
	AttentionChunk int    // block-causal attention's query chunk, where it is not the default
	Arch           string // the pure-Go backend's architecture (GOARCH)
	Processor      string // what XLA compiles for (Processor)
	SplitDecode    bool   // XLA's decoders split prefilling rows from decoding ones, padded to a few shapes
	Plugin         string // the PJRT plugin's build where it is not the pinned one (pluginBuild)
	XLAFlags       string // XLA_FLAGS
}

// String is the one line result keys and the committed notebooks' metadata hold, such as
// "xla/packed-updates/read-queries/block-causal/cpu=…/split-decode/…".
func (n Numerics) String() string {
	s := n.Backend
	if n.PackedUpdates {
		s += "/packed-updates/read-queries/block-causal"
		if n.AttentionChunk != 0 {
			s += "/chunk=" + strconv.Itoa(n.AttentionChunk)
		}
	}
	if n.Arch != "" {
		s += "/arch=" + n.Arch
	}
	if n.Processor != "" {
		s += "/cpu=" + n.Processor
	}
	if n.SplitDecode {
		s += "/split-decode/buckets=pow2+mid/rows=pow2/cache=pow2-min128/pages=64"
	}
	if n.Plugin != "" {
		s += "/plugin=" + n.Plugin
	}
	if n.XLAFlags != "" {
		s += "/XLA_FLAGS=" + n.XLAFlags
	}
	return s
}

// describe reads the engine's Numerics: once, when it is made.
func (e *Engine) describe() Numerics {
	n := Numerics{Backend: e.backend.Name(), PackedUpdates: !e.sched.paddedUpdates}
	if n.PackedUpdates && e.sched.attentionChunk != 0 && e.sched.attentionChunk != defaultAttentionChunk {
		n.AttentionChunk = e.sched.attentionChunk
	}
	if e.pureGo {
		n.Arch = runtime.GOARCH
		return n
	}
	n.Processor = Processor()
	n.SplitDecode = !e.sched.paddedDecode
	n.Plugin = pluginBuild(e.plugin)
	n.XLAFlags = os.Getenv("XLA_FLAGS")
	return n
}
