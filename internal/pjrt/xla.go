//go:build ((linux && amd64) || darwin) && !noxla

package pjrt

// XLACompiledIn says whether GoMLX's XLA backend is compiled into programs of this platform and build tags: GoMLX
// v0.26 registers it on linux/amd64 and darwin, and not under the build tag noxla (its backends/default/xla.go).
// Elsewhere an installed PJRT plugin is not used. gomlxmodel checks it against GoMLX's own list of backends.
const XLACompiledIn = true
