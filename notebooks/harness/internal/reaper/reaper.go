// Package reaper runs a command so that nothing it starts outlives the process that started it, however that
// process ends: on Linux, [Supervise] puts a watchdog between the two, a copy of the running program that the
// package's init turns into the watchdog (the program is re-executed through /proc/self/exe with envVar set).
//
// The watchdog marks itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so every process the command starts
// stays its descendant even when its own parent dies or it starts a session of its own, and it holds the read end
// of a pipe, the lifeline, whose only write end the starting process keeps. When the lifeline reaches end of file,
// the starting process is gone (it exited or was killed, SIGKILL included): the watchdog kills every descendant and
// exits. When the command exits first, the watchdog kills what the command left running and exits as it did.
// SIGINT and SIGTERM sent to the watchdog are passed on to the command.
//
// Any program that imports the package (directly or not) can be a watchdog: its init runs before the program's
// own, and returns at once unless envVar is set, which the watchdog removes from the command's environment.
//
// On other systems Supervise changes nothing: the command runs as a plain child.
package reaper

// envVar tells the program, re-executed as a watchdog, the file descriptor of the lifeline.
const envVar = "AGENTRL_REAPER_LIFELINE"

// watchdogName is the watchdog's argv[0], what ps shows for it.
const watchdogName = "agentrl-reaper"
