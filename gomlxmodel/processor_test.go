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
	if n := testEng().Numerics(); !testEng().pureGo && n.Processor != p {
		t.Errorf("Processor() = %q, the engine's numerics %q", p, n.Processor)
	}
}

// TestNumericsNamesProcessor: results computed on XLA are keyed on the processor and XLA_FLAGS (XLA compiles
// for the host), those of the pure-Go backend on the architecture only.
func TestNumericsNamesProcessor(t *testing.T) {
	n := testEng().NumericsKey()
	if got, want := strings.Contains(n, "/cpu="+Processor()), !testEng().pureGo; got != want {
		t.Errorf("Numerics() = %q: names the processor %v, want %v", n, got, want)
	}
	if got, want := strings.HasSuffix(n, "/arch="+runtime.GOARCH), testEng().pureGo; got != want {
		t.Errorf("Numerics() = %q: names the architecture %v, want %v", n, got, want)
	}
}
