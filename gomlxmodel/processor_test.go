package gomlxmodel

import (
	"runtime"
	"strings"
	"testing"
)

func TestProcessor(t *testing.T) {
	p := Processor()
	if !strings.Contains(p, runtime.GOARCH) || strings.Contains(p, "\n") {
		t.Errorf("Processor() = %q, want one line naming %s", p, runtime.GOARCH)
	}
	if fresh := describeProcessor(); p != fresh {
		t.Errorf("Processor() = %q, a fresh reading %q", p, fresh)
	}
}

// TestNumericsNamesProcessor: results computed on XLA are keyed on the processor and XLA_FLAGS (XLA compiles
// for the host), those of the pure-Go backend on the architecture only.
func TestNumericsNamesProcessor(t *testing.T) {
	n, err := Numerics()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Contains(n, "/cpu="+Processor()), !pureGoBackend(); got != want {
		t.Errorf("Numerics() = %q: names the processor %v, want %v", n, got, want)
	}
	if got, want := strings.HasSuffix(n, "/arch="+runtime.GOARCH), pureGoBackend(); got != want {
		t.Errorf("Numerics() = %q: names the architecture %v, want %v", n, got, want)
	}
}
