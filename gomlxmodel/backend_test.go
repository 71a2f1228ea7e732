package gomlxmodel

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/internal/pjrt"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

// TestEngineDefault checks the backend an engine of the environment's options runs on, and that two engines made
// from the same options describe the same numerics with executors of their own.
func TestEngineDefault(t *testing.T) {
	e1, e2 := testEng(), must(NewEngine(EnvOptions()))
	if e1.NumericsKey() != e2.NumericsKey() {
		t.Errorf("two engines of one environment: numerics %q and %q", e1.NumericsKey(), e2.NumericsKey())
	}
	m := must(New(e2, tinyConfig(), 1))
	if _, err := m.Logits(make([]int32, 4), 1, 4); err != nil {
		t.Fatal(err)
	}
	if len(e2.execs) != 1 || e1.execs == nil {
		t.Errorf("the second engine has %d executors after one forward pass, want 1", len(e2.execs))
	}
	b := e1.Backend()
	if os.Getenv(backends.ConfigEnvVar) != "" {
		return
	}
	want := "SimpleGo"
	if installedPJRT(pjrt.Dir()) != "" {
		want = "xla"
	}
	if !strings.Contains(strings.ToLower(b.Name()), strings.ToLower(want)) {
		t.Errorf("default backend %q, want %s", b.Name(), want)
	}
}

// noHangEnv marks the child process in which TestBackendNoHang runs on the pure-Go backend.
const noHangEnv = "GOMLXMODEL_NOHANG_CHILD"

// TestBackendNoHang runs the graphs that deadlocked SimpleGo's default parallel mode on 2 CPUs
// (a small update: two losses and a gradient, [8, 32]) repeatedly, from two goroutines at once, on
// the pure-Go backend in this package's default configuration (GOMLX_BACKEND=go, that is
// DefaultBackendConfig), and fails instead of hanging if they do not finish in time. Where this process
// runs another backend (XLA, the default where a PJRT plugin is installed), it runs itself again as a
// child process with GOMLX_BACKEND=go, as the tests' engine is made from the environment once per process.
func TestBackendNoHang(t *testing.T) {
	if os.Getenv(noHangEnv) == "" && !testEng().pureGo {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBackendNoHang$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), noHangEnv+"=1", backends.ConfigEnvVar+"="+simplego.BackendName)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child process on the pure-Go backend: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestBackendNoHang") {
			t.Fatalf("child process did not pass TestBackendNoHang:\n%s", out)
		}
		t.Log("passed in a child process on the pure-Go backend")
		return
	}
	if !testEng().pureGo {
		t.Fatalf("child process: backend is not the pure-Go one (%s=%q)", backends.ConfigEnvVar, os.Getenv(backends.ConfigEnvVar))
	}
	cfg := tinyConfig()
	done := make(chan error, 2)
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := New(testEng(), cfg, int64(g))
			if err != nil {
				done <- err
				return
			}
			b := makeBatch(rand.New(rand.NewPCG(uint64(g), 1)), cfg, 8, 32)
			for range 30 {
				if _, err := m.Update(b, testLoss); err != nil {
					done <- err
					return
				}
				if _, err := m.SequenceLogProbs(b.IDs, b.B, b.T); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	timeout := time.After(60 * time.Second)
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatal("graph execution hung (SimpleGo deadlock?)")
		}
	}
	wg.Wait()
}
