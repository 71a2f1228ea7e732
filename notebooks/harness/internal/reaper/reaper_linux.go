package reaper

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supervise makes cmd, not yet started, run under a watchdog (see the package's doc): it rewrites cmd to start
// this program again, through /proc/self/exe, which then runs cmd's Path with cmd's Args. Call it once cmd's Path,
// Args, Env (nil: this process's) and ExtraFiles are final; its Dir, standard streams and ExtraFiles pass through
// the watchdog to the command. cmd.SysProcAttr must be nil, since it would apply to the watchdog. The watchdog leads a process group of its own, so that a signal sent to
// this process's group (Ctrl-C on a terminal, a supervisor's SIGKILL) reaches only this process, which decides; the
// command gets SIGTERM if the watchdog itself dies. cmd.Process is the watchdog: a cmd.Cancel that sends SIGTERM or
// SIGINT passes it on to the command, while Kill, Cancel's default, leaves what the command started to the
// command's SIGTERM.
//
// Call release once cmd has ended or failed to start: it closes this process's end of the lifeline. Called
// earlier, it makes the watchdog kill the command and all it started.
func Supervise(cmd *exec.Cmd) (release func(), err error) {
	if cmd.SysProcAttr != nil {
		return nil, errors.New("reaper: cmd.SysProcAttr is set")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	fd := 3 + len(cmd.ExtraFiles) // the watchdog's descriptor for r
	cmd.Env = append(slices.Clip(env), envVar+"="+strconv.Itoa(fd))
	cmd.ExtraFiles = append(slices.Clip(cmd.ExtraFiles), r)
	cmd.Args = append([]string{watchdogName, cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe" // this program, even when its file is gone (go run removes it)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return func() {
		r.Close()
		w.Close()
	}, nil
}

// init turns this process into a watchdog when it was started as one; it then never returns.
func init() {
	fd, ok := os.LookupEnv(envVar)
	if !ok {
		return
	}
	os.Exit(watch(fd, os.Args[1:]))
}

// watch is the watchdog: it runs args[1:] as the program args[0], with the lifeline on descriptor fdText, until
// the lifeline ends or the program exits, then kills every descendant left. It returns the exit status: the
// program's (when the program died of a signal, watch kills this process with the same signal), 1 when the
// lifeline ended first, 127 when the program could not be started.
func watch(fdText string, args []string) int {
	fd, err := strconv.Atoi(fdText)
	if err != nil || len(args) < 2 {
		fmt.Fprintf(os.Stderr, "%s: started without a lifeline or a command (%s=%q, %d args)\n", watchdogName,
			envVar, fdText, len(args))
		return 127
	}
	syscall.CloseOnExec(fd) // the command's descendants must not hold it
	lifeline := os.NewFile(uintptr(fd), "lifeline")
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "%s: PR_SET_CHILD_SUBREAPER: %v\n", watchdogName, err)
		return 127
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	cmd := &exec.Cmd{
		Path: args[0], Args: args[1:], Env: without(os.Environ(), envVar),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM},
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", watchdogName, err)
		return 127
	}
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, lifeline) // nothing is written: it returns when the other end is closed
		close(gone)
	}()
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	for {
		select {
		case s := <-sigs:
			cmd.Process.Signal(s) // fails only once it has exited, which exited tells
		case <-gone:
			killDescendants()
			return 1
		case <-exited:
			killDescendants()
			return exitAs(cmd.ProcessState)
		}
	}
}

// without returns env less the variables named key.
func without(env []string, key string) []string {
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
}

// exitAs returns the exit status of ps; for a process killed by a signal, it first kills this one with it.
func exitAs(ps *os.ProcessState) int {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ps.ExitCode()
	}
	signal.Reset(ws.Signal())
	syscall.Kill(os.Getpid(), ws.Signal())
	time.Sleep(time.Second) // a signal that does not kill: exit as a shell reports one that did
	return 128 + int(ws.Signal())
}

// killDescendants sends SIGKILL to every living descendant of this process, again and again until there is none
// left (a process may start another, or reparent to this one, while they are killed), for at most 10 seconds.
// The zombies left are reaped when this process exits.
func killDescendants() {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := descendants(os.Getpid())
		if len(pids) == 0 || time.Now().After(deadline) {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// descendants returns the processes below root in the process tree, as /proc tells it, less the zombies.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	zombie := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := readStat(pid)
		if !ok {
			continue // exited meanwhile
		}
		children[ppid] = append(children[ppid], pid)
		zombie[pid] = state == "Z" || state == "X"
	}
	var alive []int
	queue := slices.Clone(children[root])
	for len(queue) > 0 {
		pid := queue[0]
		queue = append(queue[1:], children[pid]...)
		if !zombie[pid] {
			alive = append(alive, pid)
		}
	}
	return alive
}

// readStat returns the parent and the state of process pid from /proc/PID/stat.
func readStat(pid int) (ppid int, state string, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	// "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so the fields start after the last ')'.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, "", false
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0], err == nil
}
