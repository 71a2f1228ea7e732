package harness

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes cmd's process receive SIGTERM if this process dies first. What that process started may
// outlive both: a command whose whole tree must end with this process runs under reaper.Supervise instead.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
