package gomlxmodel

import (
	"os"
	"runtime"

	"github.com/agentrl-go/agentrl/codekey"
)

// A key of a result that this package computes holds its Numerics besides its code.
func init() { codekey.Numerics(Numerics) }

// Numerics names what decides the bits of this package's results in this process, read off the same
// settings that choose the computation: the backend; how the updates' graphs lay out their rows
// (packed rows, queries of the last block at read positions only, block-causal attention: each changes
// the order of floating-point sums); on the pure-Go backend, the architecture (Go fuses multiply-adds on
// some, such as arm64, and not on amd64); on XLA, the Processor its code is compiled for, the shapes its
// split decoders pad to, the plugin build and XLA_FLAGS. Result caches key on it, and the notebook
// harness compares executed outputs exactly only with outputs committed under the same Numerics.
func Numerics() (string, error) {
	b, err := Backend()
	if err != nil {
		return "", err
	}
	name := b.Name()
	if packUpdates() {
		name += "/packed-updates/read-queries/block-causal"
	}
	if pureGoBackend() {
		name += "/arch=" + runtime.GOARCH
	} else {
		name += "/cpu=" + Processor()
		if splitDecode() {
			name += "/split-decode/buckets=pow2+mid/rows=pow2/cache=pow2-min128/pages=64"
		}
		if id := pluginBuild(); id != "" { // "" for the pinned plugin
			name += "/plugin=" + id
		}
		if flags := os.Getenv("XLA_FLAGS"); flags != "" {
			name += "/XLA_FLAGS=" + flags
		}
	}
	return name, nil
}
