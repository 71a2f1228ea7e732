package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killMarkEnv marks the processes of one TestKilledExecuteLeavesNothing run: each inherits it, with the run's
// temporary folder as its value.
const killMarkEnv = "AGENTRL_KILL_TEST"

// sleepingNotebook returns a notebook of one GoNB cell that writes its program's pid to pidFile, then sleeps a
// minute.
func sleepingNotebook(pidFile string) ([]byte, error) {
	source := fmt.Sprintf("%%%%\nos.WriteFile(%q, []byte(fmt.Sprint(os.Getpid())), 0o644)\ntime.Sleep(time.Minute)\n",
		pidFile)
	return json.Marshal(map[string]any{
		"cells": []map[string]any{{"cell_type": "code", "execution_count": nil, "id": "sleep",
			"metadata": map[string]any{}, "outputs": []any{}, "source": source}},
		"metadata": map[string]any{"kernelspec": map[string]string{"display_name": "Go (gonb)", "language": "go",
			"name": "gonb"}},
		"nbformat": 4, "nbformat_minor": 5,
	})
}

// TestKilledExecuteLeavesNothing runs `go run ./cmd/execute` (built first, so that the signal hits it
// and not `go run`) on a notebook whose cell sleeps a minute, kills it with SIGKILL while the cell's program runs,
// and checks that within a few seconds none of the processes it started is left: the launcher, the GoNB kernel,
// gopls and the cell's program. It kills execute alone (its launcher then gets SIGTERM, its parent-death signal),
// and execute's process group, as a job runner or CI does (which kills the launcher too, before it can stop the
// kernel).
func TestKilledExecuteLeavesNothing(t *testing.T) {
	r := newRunner(t)
	ctx := testContext(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "execute")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/execute")
	build.Dir, build.Env = root, r.environ()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/execute: %v\n%s", err, out)
	}
	t.Run("execute", func(t *testing.T) { killExecute(t, r, bin, root, false) })
	t.Run("process group", func(t *testing.T) { killExecute(t, r, bin, root, true) })
}

// killExecute runs the execute command bin from root on a notebook whose cell sleeps a minute, kills it (its
// process group with group) with SIGKILL while the cell's program runs, and fails the test if any of the processes
// it started is alive 10 seconds later. The run's processes are those whose environment holds killMarkEnv with the
// run's folder, which is also their TMPDIR (so that what GoNB and Jupyter leave in it goes with the test).
func killExecute(t *testing.T, r *Runner, bin, root string, group bool) {
	run, err := os.MkdirTemp("", "nbkill-") // short: gopls's socket in it must fit a unix socket's path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	nb, pidFile := filepath.Join(run, "sleep.ipynb"), filepath.Join(run, "cell.pid")
	data, err := sleepingNotebook(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nb, data, 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(run, "execute.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	execute := exec.Command(bin, "-jobs", "1", nb)
	execute.Dir, execute.Stdout, execute.Stderr = root, logf, logf
	execute.Env = r.environ(killMarkEnv+"="+run, "TMPDIR="+run, "AGENTRL_CACHE="+filepath.Join(run, "cache"))
	execute.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a group of its own, as a job runner starts it
	if err := execute.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- execute.Wait() }()
	defer func() { killAll(runProcesses(t, run)) }() // what an early failure leaves
	log := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }

	cell := waitForCell(t, pidFile, r.StartupTimeout+time.Minute, exited, log)
	before := runProcesses(t, run)
	t.Logf("the run's processes, the cell's program %d running:\n%s", cell, strings.Join(before, "\n"))
	if !slices.ContainsFunc(before, func(p string) bool { return strings.HasPrefix(p, strconv.Itoa(cell)+" ") }) {
		t.Fatalf("the cell's program %d does not carry %s: the test cannot find the run's processes", cell, killMarkEnv)
	}
	target := execute.Process.Pid
	if group {
		target = -target
	}
	if err := syscall.Kill(target, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	deadline := time.Now().Add(10 * time.Second)
	left := runProcesses(t, run)
	for ; len(left) > 0 && time.Now().Before(deadline); left = runProcesses(t, run) {
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("10s after SIGKILL, these of the run's processes are left:\n%s\nexecute's log:\n%s",
			strings.Join(left, "\n"), log())
	}
}

// waitForCell waits up to d for the cell's program to write its pid to pidFile, and returns it. It fails the test
// if execute exits first, with log() in the message.
func waitForCell(t *testing.T, pidFile string, d time.Duration, exited <-chan error, log func() string) int {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("execute exited (%v) before the cell's program ran:\n%s", err, log())
		default:
		}
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
			pid, err := strconv.Atoi(string(b))
			if err != nil {
				t.Fatalf("%s holds %q", pidFile, b)
			}
			return pid
		}
	}
	t.Fatalf("the cell's program did not start within %v:\n%s", d, log())
	return 0
}

// runProcesses returns "PID COMMAND LINE" for every living process whose environment holds killMarkEnv=run, this
// one aside. (A zombie's environment cannot be read: it is not listed.)
func runProcesses(t *testing.T, run string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	mark := []byte("\x00" + killMarkEnv + "=" + run + "\x00")
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), mark) {
			continue
		}
		args, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		found = append(found, e.Name()+" "+strings.TrimSpace(string(bytes.ReplaceAll(args, []byte{0}, []byte{' '}))))
	}
	return found
}

// killAll sends SIGKILL to the processes that runProcesses listed.
func killAll(procs []string) {
	for _, p := range procs {
		if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
