//go:build unix

package agentrl

import "syscall"

// cpuSeconds is the process's user plus system CPU time, in seconds.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
