package reaper

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv, set, makes the test binary the process that TestParentKilled kills: it runs the shell script the
// variable holds under Supervise, until killed.
const helperEnv = "REAPER_TEST_HELPER"

// markEnv marks the processes of one test: each inherits it, with the test's temporary folder as its value.
const markEnv = "REAPER_TEST_MARK"

func TestMain(m *testing.M) {
	if script := os.Getenv(helperEnv); script != "" {
		cmd := exec.Command("sh", "-c", script)
		release, err := Supervise(cmd)
		if err != nil {
			panic(err)
		}
		defer release()
		cmd.Run()
		return
	}
	os.Exit(m.Run())
}

// escapes is a shell script that starts processes as a kernel does: one in a session of its own, one whose parent
// exits at once (so that it is reparented), one a plain child; it then writes the file ready and waits.
const escapes = `setsid sleep 300 &
(sleep 300 &) 
sleep 300 &
echo > "$` + markEnv + `/ready"
wait
`

// TestParentKilled kills the process that supervises a command with SIGKILL: the watchdog must kill the command
// and all it started, escaped to a session of their own or orphaned, within a few seconds.
func TestParentKilled(t *testing.T) {
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+escapes, markEnv+"="+dir)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Wait()
	defer helper.Process.Kill()
	waitFor(t, filepath.Join(dir, "ready"))
	before := marked(t, dir)
	// the helper, the watchdog, sh, three sleeps
	if len(before) < 6 {
		t.Fatalf("only %d processes of the test are running: %q", len(before), before)
	}
	helper.Process.Kill()
	helper.Wait()
	if left := settle(t, dir, 5*time.Second); len(left) > 0 {
		t.Errorf("after SIGKILL of the supervising process, these of its %d processes are left: %q", len(before), left)
	}
}

// TestCommandExits: once the command exits, what it left running is killed, and the watchdog exits as it did.
func TestCommandExits(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"status", "setsid sleep 300 &\nexit 3", "exit status 3"},
		{"signal", "setsid sleep 300 &\nkill -TERM $$", "signal: terminated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command("sh", "-c", tc.script)
			cmd.Env = append(os.Environ(), markEnv+"="+dir)
			release, err := Supervise(cmd)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			if err := cmd.Run(); err == nil || err.Error() != tc.want {
				t.Errorf("Run = %v, want %s", err, tc.want)
			}
			if left := marked(t, dir); len(left) > 0 {
				t.Errorf("after the command exited, these are left: %q", left)
			}
		})
	}
}

// TestSignalPassedOn: SIGTERM sent to the watchdog reaches the command.
func TestSignalPassedOn(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `trap 'exit 7' TERM; echo > "$`+markEnv+`/ready"; while :; do sleep 0.1; done`)
	cmd.Env = append(os.Environ(), markEnv+"="+dir)
	release, err := Supervise(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, filepath.Join(dir, "ready"))
	cmd.Process.Signal(syscall.SIGTERM)
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Errorf("Wait = %v, want the command's trap: exit status 7", err)
	}
}

// waitFor waits up to 10 seconds for file to exist.
func waitFor(t *testing.T, file string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(file); err == nil {
			return
		}
	}
	t.Fatalf("%s was not written within 10s", file)
}

// settle waits up to d for the test's processes to end, and returns those left, after killing them.
func settle(t *testing.T, dir string, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		left := marked(t, dir)
		if len(left) == 0 || time.Now().After(deadline) {
			for _, p := range left {
				pid, _ := strconv.Atoi(strings.Fields(p)[0])
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// marked returns "PID COMMAND LINE" for every living process whose environment holds markEnv=dir, this one aside.
// (A zombie's environment cannot be read.)
func marked(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	mark := []byte("\x00" + markEnv + "=" + dir + "\x00")
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
		found = append(found, strconv.Itoa(pid)+" "+strings.TrimSpace(string(bytes.ReplaceAll(args, []byte{0}, []byte{' '}))))
	}
	return found
}
