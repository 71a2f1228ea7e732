//go:build !unix

package agentrl

// cpuSeconds is unknown here: the benchmark's CPU metrics read 0.
func cpuSeconds() float64 { return 0 }
