//go:build !(((linux && amd64) || darwin) && !noxla)

package pjrt

// XLACompiledIn: see xla.go.
const XLACompiledIn = false
