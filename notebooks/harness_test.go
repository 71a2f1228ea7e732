package notebooks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

func TestParseCellTimeout(t *testing.T) {
	for s, want := range map[string]time.Duration{"40m": 40 * time.Minute, "1s": time.Second, "90s": 90 * time.Second,
		"500ms": 0, "0": 0, "-5m": 0, "forever": 0} {
		got, err := parseCellTimeout(s)
		if got != want || (err == nil) != (want != 0) {
			t.Errorf("parseCellTimeout(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

func TestBackendNote(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	for _, tc := range []struct {
		name, backend, env string
		err                error
		want               string
	}{
		{"xla", "xla", "", nil, "compiles for the processor it runs on (here " + gomlxmodel.Processor()},
		{"pure Go, no plugin", "SimpleGo (go)", "", nil, "ran on the SimpleGo (go) backend, but the committed outputs are the XLA backend's"},
		{"chosen", "SimpleGo (go)", "go", nil, "(GOMLX_BACKEND=go)"},
		{"none", "", "", errors.New("boom"), "no GoMLX backend here (boom)"},
	} {
		t.Setenv("GOMLX_BACKEND", tc.env)
		got := backendNote(tc.backend, tc.err)
		if !strings.Contains(got, tc.want) || strings.Contains(got, "\n") {
			t.Errorf("%s: backendNote = %q, want one line containing %q", tc.name, got, tc.want)
		}
	}
}

// TestExecuteStreams runs Execute with a hand-built Runner whose "Python" is a shell script that writes to both
// streams: the Runner must run in this process's environment, and the two streams, copied by os/exec, must not
// race on the log and the tail (go test -race).
func TestExecuteStreams(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "python")
	script := "#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do echo out $i; echo err $i >&2; done\n" +
		"echo \"mark=$AGENTRL_TEST_MARK\" >&2\nexit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AGENTRL_TEST_MARK", "inherited")
	var log bytes.Buffer
	r := &Runner{Python: fake, CellTimeout: time.Minute, StartupTimeout: time.Minute, Log: &log}
	err := r.Execute(context.Background(), filepath.Join(dir, "x.ipynb"), filepath.Join(dir, "y.ipynb"))
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "mark=inherited") {
		t.Errorf("Execute = %v, want exit status 3 and the script's last line", err)
	}
	if !strings.Contains(log.String(), "out 16") || !strings.Contains(log.String(), "err 16") {
		t.Errorf("log lacks the streams:\n%s", log.String())
	}
}
