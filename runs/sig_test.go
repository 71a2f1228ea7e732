package runs_test

import (
	"os"
	"syscall"
)

// The test's interrupt, apart from sigEnv's file: it is instrumentation of the process, not an input of the run
// (a key reads the code of the file that declares a type, as a notebook's cell program is one file).

// sig says when sigEnv interrupts the process: while it makes the at-th environment since arm (0: never).
var sig sigControl

type sigControl struct{ at, made int }

func (c *sigControl) arm(at int) { c.at, c.made = at, 0 }

// interruptAt counts one environment made and, at the one to interrupt, sends the process an interrupt.
func interruptAt() error {
	sig.made++
	if sig.made != sig.at {
		return nil
	}
	return syscall.Kill(os.Getpid(), syscall.SIGINT)
}
