//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
)

// lockedAnswer is Cached of v under "locked" in the store at dir/store, whose notices go to notices. Its
// computation creates dir/started and, when hold is set, waits until dir/release exists. Every process of the lock
// tests calls it, so all need the same key.
func lockedAnswer(dir string, v int, hold bool, computed *bool, notices io.Writer) (int, error) {
	s, err := Open(filepath.Join(dir, "store"))
	if err != nil {
		return 0, err
	}
	s.Notices = notices
	return Cached(s, codekey.Keyed{Key: "locked"}, intCodec, func() (int, error) {
		*computed = true
		if err := os.WriteFile(filepath.Join(dir, "started"), nil, 0o644); err != nil {
			return 0, err
		}
		for deadline := time.Now().Add(time.Minute); hold; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "release")); err == nil || time.Now().After(deadline) {
				break
			}
		}
		return v, nil
	})
}

// TestLockHelper is the other process of the lock tests: it computes lockedAnswer(…, 1, hold) in the directory
// that AGENTRL_LOCK_HELPER names. It does nothing in a normal run.
func TestLockHelper(t *testing.T) {
	dir := os.Getenv("AGENTRL_LOCK_HELPER")
	if dir == "" {
		t.Skip("a helper process of TestCachedWaitsForAnotherProcess")
	}
	var computed bool
	if _, err := lockedAnswer(dir, 1, true, &computed, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// startHolder starts a helper process that computes the "locked" entry in dir and holds its lock until
// dir/release exists, and waits until it has started computing.
func startHolder(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AGENTRL_LOCK_HELPER="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatal("the helper process did not start computing")
		}
	}
}

// TestCachedWaitsForAnotherProcess checks that a process needing a result that another process is computing waits
// for it (saying so in one line) and loads it, and that when the other is killed instead, it computes the result
// itself; either way the lock file is removed.
func TestCachedWaitsForAnotherProcess(t *testing.T) {
	for _, killed := range []bool{false, true} {
		name := map[bool]string{false: "holder finishes", true: "holder killed"}[killed]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			holder := startHolder(t, dir)
			var log bytes.Buffer
			type result struct {
				v        int
				err      error
				computed bool
			}
			done := make(chan result, 1)
			go func() {
				var r result
				r.v, r.err = lockedAnswer(dir, 2, false, &r.computed, &log)
				done <- r
			}()
			select {
			case r := <-done:
				t.Fatalf("returned %+v while the other process held the lock", r)
			case <-time.After(300 * time.Millisecond):
			}
			if killed {
				if err := holder.Process.Kill(); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			var r result
			select {
			case r = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("still waiting 30 s after the other process ended")
			}
			want := map[bool]int{false: 1, true: 2}[killed]
			if r.err != nil || r.v != want || r.computed != killed {
				t.Errorf("got %d, %v, computed %v; want %d, computed %v", r.v, r.err, r.computed, want, killed)
			}
			if n := strings.Count(log.String(), "(another process is computing it)"); n != 1 {
				t.Errorf("%d waiting lines in %q, want 1", n, log.String())
			}
			locks, _ := filepath.Glob(filepath.Join(dir, "store", "*.lock"))
			temps, _ := filepath.Glob(filepath.Join(dir, "store", ".tmp-*"))
			if len(locks)+len(temps) > 0 {
				t.Errorf("left behind: %v %v", locks, temps)
			}
			_ = holder.Wait()
			if err := holder.ProcessState; !killed && (err == nil || !err.Success()) {
				t.Errorf("the helper process: %v", holder.ProcessState)
			}
		})
	}
}

// TestLockReleaseRemovesTheFile checks that releasing a lock removes its file and that the key can be locked
// again at once.
func TestLockReleaseRemovesTheFile(t *testing.T) {
	s := mustStore(t)
	release, waited, err := s.lock("k")
	if err != nil || waited {
		t.Fatalf("lock: waited %v, %v", waited, err)
	}
	release()
	if _, err := os.Stat(s.lockPath("k")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file after release: %v", err)
	}
	release, _, err = s.lock("k")
	if err != nil {
		t.Fatal(err)
	}
	release()
}
