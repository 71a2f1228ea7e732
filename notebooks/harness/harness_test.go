package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

func TestNumericsNote(t *testing.T) {
	const xlaA, xlaB = "xla/cpu=GenuineIntel 6 167 amd64 avx512f", "xla/cpu=AuthenticAMD 25 1 amd64 avx2"
	const goAMD = "SimpleGo (go)/arch=amd64"
	for _, tc := range []struct {
		name, committed, here, env string
		want                       []string
	}{
		{"another processor", xlaA, xlaB, "", []string{"computed under " + xlaA + ", these under " + xlaB, "processor", "class 1 rules gate"}},
		{"pure Go, no plugin", xlaA, goAMD, "", []string{"ran on the SimpleGo (go) backend", "`go run ./kernelsetup`", "class 3 failures are reported"}},
		{"pure Go, chosen", xlaA, goAMD, "go", []string{"computed under " + xlaA + ", these under " + goAMD}},
		{"no backend", xlaA, "", "", []string{"no GoMLX backend here", xlaA}},
	} {
		t.Setenv("GOMLX_BACKEND", tc.env)
		got := numericsNote(tc.committed, tc.here)
		for _, w := range tc.want {
			if !strings.Contains(got, w) || strings.Contains(got, "\n") {
				t.Errorf("%s: numericsNote = %q, want one line containing %q", tc.name, got, w)
			}
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

// TestChapterIgnoresExercises: a reader's copy of a chapter notebook in the exercises folder is not a chapter
// notebook (the tests would otherwise check the reader's outputs), and git ignores it.
func TestChapterIgnoresExercises(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ExercisesDir), 0o755)
	for _, p := range []string{"12.1-a.ipynb", "Untitled.ipynb", filepath.Join(ExercisesDir, "12.1-a.ipynb"),
		filepath.Join(ExercisesDir, "12.2-b.ipynb")} {
		os.WriteFile(filepath.Join(dir, p), []byte("{}"), 0o644)
	}
	got, err := Chapter(dir)
	if err != nil || len(got) != 1 || filepath.Base(got[0]) != "12.1-a.ipynb" || filepath.Dir(got[0]) != dir {
		t.Errorf("Chapter = %q, %v", got, err)
	}
	ignore, err := os.ReadFile(filepath.Join("..", ExercisesDir, ".gitignore"))
	if err != nil || !strings.Contains(string(ignore), "\n*\n") || !strings.Contains(string(ignore), "!README.md") {
		t.Errorf("exercises/.gitignore = %q, %v: must ignore all but the README", ignore, err)
	}
}
