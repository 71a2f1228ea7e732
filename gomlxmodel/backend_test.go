package gomlxmodel

import (
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomlx/gomlx/backends"
)

func TestBackendDefault(t *testing.T) {
	b, err := Backend()
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := Backend(); b2 != b {
		t.Error("Backend() is not a singleton")
	}
	if os.Getenv(backends.ConfigEnvVar) != "" {
		return
	}
	want := "SimpleGo"
	if installedPJRT() != "" {
		want = "xla"
	}
	if !strings.Contains(strings.ToLower(b.Name()), strings.ToLower(want)) {
		t.Errorf("default backend %q, want %s", b.Name(), want)
	}
}

// TestBackendNoHang runs the graphs that deadlocked SimpleGo's default parallel mode on 2 CPUs
// (a small update: two losses and a gradient, [8, 32]) repeatedly, from two goroutines at once, and
// fails instead of hanging if they do not finish in time.
func TestBackendNoHang(t *testing.T) {
	cfg := tinyConfig()
	done := make(chan error, 2)
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := New(cfg, int64(g))
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
