package notebooks

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel's launcher receive SIGTERM if this process dies first.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
