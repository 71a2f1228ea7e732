//go:build unix

package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/internal/setup"
)

// labSection is the notebook of the reader's session: the shortest, whose setup cell trains the base agent.
const labSection = "12.1"

// labTrainMarker is in the source of the notebook's training cell (the chapter's setup, which trains the base
// agent in a cold store); the notebook's link cell is its first code cell.
const labTrainMarker = "ch12.Setup()"

// labFigureCell is the cell the session adds below the link cell and runs: the cheapest figure, drawn as the
// chapter draws its own (every figure of the chapter needs trained runs).
const labFigureCell = `import (
	"github.com/agentrl-go/agentrl/chart"
	"github.com/agentrl-go/agentrl/chart/nbdisplay"
)

%%
err := nbdisplay.Display(chart.Bars("A reader's figure", []string{"a", "b"}, []chart.Series{{Name: "s", Values: []float64{1, 2}}}))
if err != nil {
	panic(err)
}
`

// labSession is what notebooks/harness/labtest/session.mjs reports.
type labSession struct {
	Kernel string `json:"kernel"`
	Link   string `json:"link"`
	Figure *struct {
		NaturalWidth  int  `json:"naturalWidth"`
		NaturalHeight int  `json:"naturalHeight"`
		PNG           bool `json:"png"`
	} `json:"figure"`
	Runs []struct {
		Seen        []string `json:"seen"`        // the notice that the run trained or resumed, then a progress line
		AtInterrupt string   `json:"atInterrupt"` // the cell's output when the interrupt button was pressed
		Output      string   `json:"output"`      // its output when it ended
		Stderr      string   `json:"stderr"`
		Prompt      string   `json:"prompt"`
	} `json:"runs"`
}

// TestLabSession is a reader's session with a chapter notebook in a real browser: JupyterLab from the
// repository's .venv (`go run ./kernelsetup` installs it) serves a copy of notebook 12.1, and headless Chromium
// (Debian's /usr/bin/chromium, driven by puppeteer-core from notebooks/harness/labtest, which downloads no browser) opens it
// and, with mouse and keyboard, clears the outputs, runs the link cell and sees its output, adds a cell that draws
// a figure and sees the figure's <img> load, runs the chapter's setup cell (which trains the base agent: the
// result store is a fresh $AGENTRL_CACHE) until its first progress line, interrupts it with the toolbar's
// "Interrupt the kernel" button, and runs it again and interrupts it once more. It fails unless
//
//   - the notebook runs on the "Go (gonb)" kernel, the link cell prints its %goflags line, and the figure cell's
//     image/png loads in an <img> (naturalWidth > 0);
//   - the first run says it computes the base agent, each run shows one progress line, redrawn in place;
//   - each interrupted run ends with the project's one line on stderr, "… interrupted after step N of M; progress
//     saved as rl_base-….partial: run it again to resume" (ch12.Check), after the status block said that the
//     interrupt saved the progress at once;
//   - the second run says it resumes after exactly the step the first saved ("cache: resuming … after step N") and
//     is interrupted after a later step;
//   - the committed notebooks are unchanged (the session works on a copy and saves nothing).
//
// The copy is in a git-ignored folder notebooks/harness/labtest/run-*, which the test removes: the link cell finds the
// repository's go.mod above it. Screenshots of every stage go to $AGENTRL_LAB_ARTIFACTS, or a new temporary folder,
// which the log names and which is removed when the test passes and the variable is unset. The test skips under
// -short, and where node, npm, chromium, .venv's JupyterLab or the GoNB kernel is missing, unless CI=true or
// AGENTRL_LAB_TEST=1 make that a failure; it runs `npm ci` in notebooks/harness/labtest when node_modules does not hold the
// pinned puppeteer-core. The base agent trains only up to a progress line, twice, so the session takes under a
// minute once Go's build cache holds the libraries (GoNB compiles each cell).
func TestLabSession(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the JupyterLab session in a browser")
	}
	required := os.Getenv("CI") == "true" || os.Getenv("AGENTRL_LAB_TEST") == "1"
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if required {
			t.Fatal(msg + "; CI=true or AGENTRL_LAB_TEST=1 requires the JupyterLab session test")
		}
		t.Skip(msg + "; skipping the JupyterLab session test (CI=true or AGENTRL_LAB_TEST=1 requires it)")
	}

	// The tools: JupyterLab and the GoNB kernel from .venv, Chromium, Node.js and npm.
	root, err := setup.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	jupyter := setup.VenvJupyter(root)
	lab := filepath.Join(filepath.Dir(jupyter), "jupyter-lab")
	if _, err := os.Stat(lab); err != nil {
		missing("no JupyterLab in %s (`go run ./kernelsetup -venv` installs it)", filepath.Dir(jupyter))
	}
	t.Setenv(setup.JupyterEnv, jupyter) // NewRunner checks .venv's Jupyter and its GoNB kernel
	r, err := NewRunner()
	if errors.Is(err, ErrNoJupyter) {
		missing("%v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		if chromium, err = exec.LookPath("chromium"); err != nil {
			missing("chromium not found (Debian: apt-get install chromium)")
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found (Debian: apt-get install nodejs npm)")
	}
	driverDir := filepath.Join(root, "notebooks", "harness", "labtest")
	ctx, cancel := context.WithTimeout(testContext(t), 15*time.Minute)
	defer cancel()
	if err := ensurePuppeteer(ctx, t, driverDir); err != nil {
		missing("%v", err)
	}

	// The committed notebooks, to check that the session changes none of them.
	committed, err := filepath.Glob(filepath.Join(root, "notebooks", "*.ipynb"))
	if err != nil || len(committed) == 0 {
		t.Fatalf("no notebooks (%v)", err)
	}
	before := hashFiles(t, committed)
	t.Cleanup(func() { // after the server's cleanup, registered later, has stopped it
		for path, sum := range hashFiles(t, committed) {
			if sum != before[path] {
				t.Errorf("%s changed during the session: the committed notebooks must stay as they are", path)
			}
		}
	})

	// The notebook, copied below the repository's go.mod, and its cells.
	src, err := filepath.Glob(filepath.Join(root, "notebooks", labSection+"-*.ipynb"))
	if err != nil || len(src) != 1 {
		t.Fatalf("notebook %s: found %v (%v)", labSection, src, err)
	}
	nb, err := Load(src[0])
	if err != nil {
		t.Fatal(err)
	}
	linkCell, trainCell := -1, -1
	for i, c := range nb.Cells {
		if c.Type != "code" {
			continue
		}
		if linkCell < 0 {
			linkCell = i
		} else if trainCell < 0 && strings.Contains(string(c.Source), labTrainMarker) {
			trainCell = i
		}
	}
	if linkCell < 0 || trainCell < 0 {
		t.Fatalf("%s: no link cell (%d) or no code cell after it with %q (%d)", src[0], linkCell, labTrainMarker, trainCell)
	}
	dir, err := os.MkdirTemp(driverDir, "run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	name := filepath.Base(src[0])
	b, err := os.ReadFile(src[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}

	artifacts := os.Getenv("AGENTRL_LAB_ARTIFACTS")
	if artifacts == "" {
		if artifacts, err = os.MkdirTemp("", "agentrl-lab-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if !t.Failed() {
				os.RemoveAll(artifacts)
			}
		})
	} else if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screenshots of the session: %s", artifacts)
		}
	})

	// JupyterLab, with its own configuration, runtime, settings and workspaces, and a cold result store.
	tmp := t.TempDir()
	env := r.environ("AGENTRL_CACHE="+filepath.Join(tmp, "cache"), "PUPPETEER_SKIP_DOWNLOAD=1")
	for _, v := range []string{"JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"} {
		d := filepath.Join(tmp, strings.ToLower(v))
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+d)
	}
	// No news toast over the notebook, and no autosave: the session saves nothing, even in its copy.
	settings := map[string]string{
		"@jupyterlab/apputils-extension/notification.jupyterlab-settings": `{"fetchNews": "false", "checkForUpdates": false}`,
		"@jupyterlab/docmanager-extension/plugin.jupyterlab-settings":     `{"autosave": false}`,
	}
	for file, content := range settings {
		p := filepath.Join(tmp, "jupyterlab_settings_dir", file)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base, token := startLab(ctx, t, env, lab, dir)

	// The session, in the browser.
	config, err := json.Marshal(map[string]any{
		"url":          base + "lab/tree/" + url.PathEscape(name) + "?token=" + token,
		"chromium":     chromium,
		"profile":      filepath.Join(tmp, "chromium"),
		"artifacts":    artifacts,
		"cells":        len(nb.Cells),
		"linkCell":     linkCell,
		"trainCell":    trainCell,
		"trainMarker":  labTrainMarker,
		"figureSource": labFigureCell,
		"timeouts": map[string]int{ // milliseconds
			"page":     int((90 * time.Second).Milliseconds()), // the page, the kernel
			"cell":     int((4 * time.Minute).Milliseconds()),  // a cell's compilation and run, the kernel's start
			"training": int((6 * time.Minute).Milliseconds()),  // up to a training cell's progress line
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, node, filepath.Join(driverDir, "session.mjs"), string(config))
	cmd.Dir = driverDir
	cmd.Env = env
	cmd.Stderr = &lineLogger{t: t}
	// On cancellation ask the driver to stop: puppeteer then closes Chromium, which SIGKILL would leave behind.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	setDeathSignal(cmd)
	out, runErr := cmd.Output()
	t.Logf("the browser session took %v", time.Since(start).Round(time.Second))
	var s labSession
	if err := json.Unmarshal(bytes.TrimSpace(out), &s); err != nil {
		t.Fatalf("session.mjs: %v; it printed %q (%v)", runErr, out, err)
	}
	if runErr != nil {
		t.Fatalf("session.mjs: %v (its log above says where the session stopped)", runErr)
	}
	checkLabSession(t, &s)
}

// checkLabSession checks what the session saw: the kernel, the link cell's output, the figure, and the training
// cell's two runs, interrupted and resumed.
func checkLabSession(t *testing.T, s *labSession) {
	t.Helper()
	if s.Kernel != "Go (gonb)" {
		t.Errorf("the notebook's kernel is %q, want Go (gonb)", s.Kernel)
	}
	if !strings.Contains(s.Link, `%goflags=["-ldflags=-w"]`) {
		t.Errorf("the link cell printed %q, want its %%goflags line", s.Link)
	}
	if f := s.Figure; f == nil || !f.PNG || f.NaturalWidth <= 0 || f.NaturalHeight <= 0 {
		t.Errorf("the figure cell's <img>: %+v, want a loaded image/png", f)
	}
	if len(s.Runs) != 2 {
		t.Fatalf("the training cell ran %d times, want 2", len(s.Runs))
	}
	stopped := regexp.MustCompile(`^(?:.*: )?interrupted after step (\d+) of (\d+); progress saved as (rl_base-\w+\.partial): run it again to resume$`)
	savedAtOnce := regexp.MustCompile(`cache: interrupt: progress after step (\d+) saved`)
	resumed := regexp.MustCompile(`cache: resuming (rl_base-\w+\.partial) after step (\d+)`)
	var saved int
	var key string
	for i, run := range s.Runs {
		t.Logf("run %d of the training cell, %s, ended with:\n%s", i+1, run.Prompt, run.Output)
		line := strings.TrimSpace(run.Stderr)
		m := stopped.FindStringSubmatch(line)
		if m == nil || strings.Contains(line, "\n") {
			t.Errorf("run %d: the cell did not end with the one-line interrupted message; its stderr: %q", i+1, run.Stderr)
			continue
		}
		step, _ := strconv.Atoi(m[1])
		if at := savedAtOnce.FindStringSubmatch(run.Output); at == nil {
			t.Errorf("run %d: the status block does not say that the interrupt saved the progress at once", i+1)
		} else if n, _ := strconv.Atoi(at[1]); n > step {
			t.Errorf("run %d: the interrupt saved step %d at once, after the run's last step %d", i+1, n, step)
		}
		if n := strings.Count(run.Output, "progress: "); n != 1 {
			t.Errorf("run %d: the status block holds %d progress lines, want the one that is redrawn in place", i+1, n)
		}
		if len(run.Seen) != 2 {
			t.Errorf("run %d: the session saw %q, want a notice and a progress line", i+1, run.Seen)
		}
		switch i {
		case 0:
			if len(run.Seen) == 0 || !strings.HasPrefix(run.Seen[0], "cache: computing rl_base-") || strings.Contains(run.Output, "cache: resuming") {
				t.Errorf("run 1 did not train the base agent from the start (a cold store computes it): saw %q, ended with %q", run.Seen, run.Output)
			}
		case 1:
			r := resumed.FindStringSubmatch(run.Output)
			switch {
			case r == nil:
				t.Errorf("run 2 did not say it resumed: %q", run.Output)
			case r[1] != key:
				t.Errorf("run 2 resumed %s, run 1 saved %s", r[1], key)
			case r[2] != strconv.Itoa(saved):
				t.Errorf("run 2 resumed after step %s, run 1 saved its progress after step %d", r[2], saved)
			}
			if step <= saved {
				t.Errorf("run 2 was interrupted after step %d, not beyond run 1's %d", step, saved)
			}
		}
		saved, key = step, m[3]
	}
}

// ensurePuppeteer runs `npm ci` in dir unless its node_modules holds the puppeteer-core that package-lock.json
// pins. PUPPETEER_SKIP_DOWNLOAD=1: the session drives the machine's Chromium, and npm downloads no browser.
func ensurePuppeteer(ctx context.Context, t *testing.T, dir string) error {
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err == nil {
		err = json.Unmarshal(b, &lock)
	}
	if err != nil {
		t.Fatalf("notebooks/harness/labtest/package-lock.json: %v", err)
	}
	want := lock.Packages["node_modules/puppeteer-core"].Version
	if want == "" {
		t.Fatal("notebooks/harness/labtest/package-lock.json pins no puppeteer-core")
	}
	installed := func() string {
		var p struct {
			Version string `json:"version"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "puppeteer-core", "package.json"))
		if err == nil {
			json.Unmarshal(b, &p)
		}
		return p.Version
	}
	if installed() == want {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm not found (Debian: apt-get install npm)")
	}
	t.Logf("npm ci in notebooks/harness/labtest (puppeteer-core %s)", want)
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PUPPETEER_SKIP_DOWNLOAD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in notebooks/harness/labtest: %v: %s", err, lastLine(string(out)))
	}
	if got := installed(); got != want {
		return fmt.Errorf("after npm ci notebooks/harness/labtest/node_modules holds puppeteer-core %q, package-lock.json pins %s", got, want)
	}
	return nil
}

// startLab serves dir with JupyterLab (the lab command) on 127.0.0.1, with a random token, and returns its base
// URL and the token once it answers. When the test ends the server is stopped as a reader's Ctrl-C would: SIGTERM,
// on which it shuts its kernels down (GoNB then removes its temporary folder and stops gopls), then SIGKILL to its
// process group if it has not exited within 30 seconds.
func startLab(ctx context.Context, t *testing.T, env []string, lab, dir string) (base, token string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var tok [16]byte
	rand.Read(tok[:])
	token = hex.EncodeToString(tok[:])

	cmd := exec.Command(lab, "--no-browser", "--allow-root", "--ip=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--ServerApp.port_retries=0", "--IdentityProvider.token="+token, "--ServerApp.root_dir="+dir)
	cmd.Dir = dir
	cmd.Env = env
	setDeathSignal(cmd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	logf, err := os.Create(filepath.Join(t.TempDir(), "jupyter-lab.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); logf.Close(); close(exited) }()
	serverLog := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Errorf("jupyter lab did not stop within 30s of SIGTERM: killing its process group")
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("jupyter lab's log:\n%s", serverLog())
		}
	})

	base = fmt.Sprintf("http://127.0.0.1:%d/", port)
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(base + "api/status?token=" + token)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, token
			}
		}
		select {
		case <-exited:
			t.Fatalf("jupyter lab exited (%v):\n%s", waitErr, serverLog())
		case <-ctx.Done():
			t.Fatalf("jupyter lab: %v", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("jupyter lab did not answer on %s within 90s:\n%s", base, serverLog())
		}
	}
}

// hashFiles returns the SHA-256 of each file.
func hashFiles(t *testing.T, paths []string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		sums[p] = hex.EncodeToString(sum[:])
	}
	return sums
}
