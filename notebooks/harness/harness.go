// Package notebooks executes the chapter's GoNB notebooks through real Jupyter and checks them: no error outputs,
// no silent Go failures, outputs equal to the committed ones after documented sanitizers, and the book-vs-run
// report (package bookreport). The test in this package runs it; `go run ./cmd/execute` writes executed outputs
// back into the committed notebooks.
//
// Environment:
//
//	AGENTRL_NOTEBOOKS=12.1,12.4     execute only these notebooks (section number or file name); "none" executes none
//	AGENTRL_NOTEBOOKS_OPTIONAL=1    skip notebook execution when Jupyter or GoNB is missing (default: fail)
//	AGENTRL_CELL_TIMEOUT=40m        per-cell timeout (Go duration, at least 1s)
//	AGENTRL_NOTEBOOK_JOBS=3         how many notebooks TestNotebooks executes at once (default: one for every core)
//	AGENTRL_JUPYTER=/path/jupyter   the jupyter command (default: see below)
//
// The jupyter command is the first of: $AGENTRL_JUPYTER; .venv/bin/jupyter in the repository (pip's JupyterLab 4
// and Notebook 7, which `go run ./kernelsetup` installs there, without root); /usr/bin/jupyter (Debian's, which
// `go run ./kernelsetup -install-jupyter` installs as root); the jupyter on PATH. The Python named in its shebang
// runs the harness's scripts (execute.py, interrupt.py), which work with nbclient 0.7 (Debian 12) to 0.11.
package harness

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentrl-go/agentrl/internal/tail"
	"github.com/agentrl-go/agentrl/notebooks/harness/internal/reaper"

	"github.com/agentrl-go/agentrl/internal/section"

	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/internal/setup"
)

// Notebook is the part of an .ipynb file the harness reads.
type Notebook struct {
	Path     string   `json:"-"`
	Cells    []Cell   `json:"cells"`
	Metadata Metadata `json:"metadata"`
}

// Metadata is the part of a notebook's metadata the harness reads and, executing, writes.
type Metadata struct {
	// Agentrl says what computed the outputs; nil in a notebook this harness never executed.
	Agentrl *Provenance `json:"agentrl,omitempty"`
}

// Provenance is what decided the bits of an executed notebook's outputs.
type Provenance struct {
	// Numerics is the numerics of the engine its cell programs computed on (gomlxmodel.Engine.NumericsKey): the
	// backend, and the processor and XLA_FLAGS on XLA, or the architecture on pure Go. Outputs reproduce exactly only under the same Numerics.
	Numerics string `json:"numerics"`
}

// Cell is one notebook cell.
type Cell struct {
	Type           string   `json:"cell_type"` // "code", "markdown", "raw"
	Source         Text     `json:"source"`
	Outputs        []Output `json:"outputs"`
	ExecutionCount *int     `json:"execution_count"` // nil for a code cell never executed
}

// Output is one output of a code cell.
type Output struct {
	Type   string                     `json:"output_type"` // "stream", "display_data", "execute_result", "error"
	Name   string                     `json:"name"`        // stream: "stdout" or "stderr"
	Text   Text                       `json:"text"`
	Data   map[string]json.RawMessage `json:"data"`
	EName  string                     `json:"ename"`
	EValue string                     `json:"evalue"`
}

// Text is a notebook string, stored in JSON either as one string or as a list of lines.
type Text string

// UnmarshalJSON accepts a string or a list of strings.
func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Text(s)
		return nil
	}
	var parts []string
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	*t = Text(strings.Join(parts, ""))
	return nil
}

// Load reads a notebook.
func Load(path string) (*Notebook, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	nb := &Notebook{Path: path}
	if err := json.Unmarshal(data, nb); err != nil {
		return nil, fmt.Errorf("%s: not a notebook: %w", path, err)
	}
	return nb, nil
}

// CodeCells returns the code cells in order.
func (nb *Notebook) CodeCells() []Cell {
	var cells []Cell
	for _, c := range nb.Cells {
		if c.Type == "code" {
			cells = append(cells, c)
		}
	}
	return cells
}

// Marker is the comment that, on the first line of a code cell, exempts its outputs from comparison (the cell
// must still run without failures).
const Marker = "nbtest: skip-compare"

// DraftMarker, anywhere in a markdown cell, says the notebook is not written yet: the report lists the book's
// lines of its section as missing without failing.
const DraftMarker = "nbtest: draft"

// SkipsCompare reports whether the cell carries Marker on its first non-empty line.
func (c Cell) SkipsCompare() bool {
	for _, line := range strings.Split(string(c.Source), "\n") {
		if strings.TrimSpace(line) != "" {
			return strings.Contains(line, Marker)
		}
	}
	return false
}

// Draft reports whether a markdown cell of the notebook carries DraftMarker.
func (nb *Notebook) Draft() bool {
	for _, c := range nb.Cells {
		if c.Type == "markdown" && strings.Contains(string(c.Source), DraftMarker) {
			return true
		}
	}
	return false
}

// Section returns the chapter section of a notebook file, "12.1" for "12.1-observations-are-inputs.ipynb".
func Section(path string) string {
	name := filepath.Base(path)
	if i := strings.IndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return strings.TrimSuffix(name, ".ipynb")
}

// ExercisesDir is the folder, under the chapter's, where readers keep their own copies of the notebooks (git
// ignores it but for its README): the tests never read it.
const ExercisesDir = "exercises"

// chapterName matches the file name of a chapter notebook: "12.1-observations-are-inputs.ipynb".
var chapterName = regexp.MustCompile(`^\d+\.\d+-[^/]*\.ipynb$`)

// Chapter returns the chapter's notebooks in dir, sorted: the files named SECTION-title.ipynb (a scratch
// "Untitled.ipynb" is not one). Notebooks in subfolders, such as a reader's copies in ExercisesDir, are not.
func Chapter(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.ipynb"))
	if err != nil {
		return nil, err
	}
	paths = slices.DeleteFunc(paths, func(p string) bool { return !chapterName.MatchString(filepath.Base(p)) })
	slices.SortFunc(paths, func(a, b string) int { return section.Compare(Section(a), Section(b)) })
	return paths, nil
}

// Select keeps the notebooks named in spec, a comma-separated list of sections ("12.1") or file names (with or
// without ".ipynb"). An empty spec keeps all; "none" keeps none. A name that matches nothing is an error.
func Select(paths []string, spec string) ([]string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return paths, nil
	}
	if spec == "none" {
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSuffix(strings.TrimSpace(name), ".ipynb")
		if name == "" {
			continue
		}
		found := false
		for _, p := range paths {
			base := strings.TrimSuffix(filepath.Base(p), ".ipynb")
			if base == name || Section(p) == name || p == name+".ipynb" {
				found = true
				if !slices.Contains(out, p) {
					out = append(out, p)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("no notebook matches %q", name)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return section.Compare(Section(a), Section(b)) })
	return out, nil
}

//go:embed execute.py
var executeScript []byte

// Runner executes notebooks with the GoNB kernel through nbclient. Build it with NewRunner, which finds the
// tools and sets the kernel's environment; a Runner built by hand runs in this process's environment.
type Runner struct {
	Jupyter        string        // the jupyter command
	Python         string        // the interpreter that runs jupyter (has nbclient)
	CellTimeout    time.Duration // per cell
	StartupTimeout time.Duration // kernel start
	Log            io.Writer     // per-cell progress ("nbexec: cell 3/9 [...] 1.2s") and the kernel's stderr
	env            []string      // the environment of the scripts and the kernel; nil: os.Environ()
}

// environ returns the Runner's environment with extra appended (KEY=VALUE), in a new slice.
func (r *Runner) environ(extra ...string) []string {
	env := r.env
	if env == nil {
		env = os.Environ()
	}
	return append(slices.Clip(env), extra...)
}

// ErrNoJupyter is wrapped by NewRunner's error when Jupyter or the GoNB kernel is missing.
var ErrNoJupyter = errors.New("notebook tools missing")

// setupHint is what to run when something is missing.
const setupHint = "run `go run ./kernelsetup` from the repository root (pip's Jupyter in .venv; as root on Debian, " +
	"`-install-jupyter` for Debian's; see README.md, Setup)"

// NewRunner returns a Runner for this machine, or an error that says what is missing (wrapping ErrNoJupyter when
// a tool is). It finds Jupyter (setup.Jupyter: $AGENTRL_JUPYTER, else the repository's .venv/bin/jupyter, else
// /usr/bin/jupyter, else the one on PATH), the Python that runs it (which must import nbclient), the GoNB kernel
// registered with it and goimports; it puts Go's bin folder first on the kernel's PATH and reads the per-cell
// timeout from $AGENTRL_CELL_TIMEOUT (default 40m). Log is io.Discard.
func NewRunner() (*Runner, error) {
	r := &Runner{CellTimeout: 40 * time.Minute, StartupTimeout: 2 * time.Minute, Log: io.Discard}
	if s := os.Getenv("AGENTRL_CELL_TIMEOUT"); s != "" {
		d, err := parseCellTimeout(s)
		if err != nil {
			return nil, err
		}
		r.CellTimeout = d
	}
	// The kernel inherits our environment: put `go install`'s directory (gonb, goimports) on PATH.
	path := os.Getenv("PATH")
	if bin, err := setup.GoBin(); err == nil {
		path = bin + string(os.PathListSeparator) + path
	}
	r.env = append(os.Environ(), "PATH="+path) // the later PATH wins
	lookPath := func(name string) (string, error) {
		for _, dir := range filepath.SplitList(path) {
			p := filepath.Join(dir, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p, nil
			}
		}
		return "", fmt.Errorf("%w: %s not found on PATH or in Go's bin directory: %s", ErrNoJupyter, name, setupHint)
	}

	var err error
	if r.Jupyter, err = setup.Jupyter(); err != nil {
		return nil, fmt.Errorf("%w: %v: %s", ErrNoJupyter, err, setupHint)
	}
	r.Python = setup.ScriptInterpreter(r.Jupyter)
	if r.Python == "" {
		return nil, fmt.Errorf("%w: cannot tell which python runs %s", ErrNoJupyter, r.Jupyter)
	}
	if out, err := exec.Command(r.Python, "-c", "import nbformat, nbclient").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: %s cannot import nbclient (%s): %s", ErrNoJupyter, r.Python,
			lastLine(string(out)), setupHint)
	}
	cmd := exec.Command(r.Jupyter, "kernelspec", "list", "--json")
	cmd.Env = r.environ()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: `%s kernelspec list` failed (%v): %s", ErrNoJupyter, r.Jupyter, err, setupHint)
	}
	var specs struct {
		Kernelspecs map[string]struct {
			Spec struct {
				Argv []string `json:"argv"`
			} `json:"spec"`
		} `json:"kernelspecs"`
	}
	if err := json.Unmarshal(out, &specs); err != nil {
		return nil, fmt.Errorf("reading `jupyter kernelspec list --json`: %w", err)
	}
	gonb, ok := specs.Kernelspecs["gonb"]
	if !ok || len(gonb.Spec.Argv) == 0 {
		return nil, fmt.Errorf("%w: the gonb kernel is not registered with Jupyter: %s", ErrNoJupyter, setupHint)
	}
	if _, err := os.Stat(gonb.Spec.Argv[0]); err != nil {
		return nil, fmt.Errorf("%w: the gonb kernel points to %s, which is missing: %s", ErrNoJupyter,
			gonb.Spec.Argv[0], setupHint)
	}
	if _, err := lookPath("goimports"); err != nil {
		return nil, err
	}
	return r, nil
}

// parseCellTimeout reads $AGENTRL_CELL_TIMEOUT: nbclient counts whole seconds, and 0 would mean no timeout.
func parseCellTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("AGENTRL_CELL_TIMEOUT=%q: %w", s, err)
	}
	if d < time.Second {
		return 0, fmt.Errorf("AGENTRL_CELL_TIMEOUT=%q: the per-cell timeout must be at least 1s", s)
	}
	return d, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// Execute runs notebook src and writes the executed notebook to dst, its metadata recording the Provenance of
// the outputs under "agentrl". The kernel runs in src's directory, which GoNB exports to cells as GONB_DIR, so
// the notebook's link cell finds the repository wherever dst is. The kernel inherits the Runner's environment,
// so its cell programs compute under this process's Numerics. Cancelling ctx stops the script, which shuts the
// kernel down. Nothing Execute starts outlives it: on Linux the script runs under a watchdog (package reaper) that
// kills whatever the script leaves when it ends, and the script, the kernel and all they started when this process
// dies, whatever killed it.
func (r *Runner) Execute(ctx context.Context, src, dst string) error {
	src, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	prov, err := json.Marshal(Here())
	if err != nil {
		return err
	}
	script, err := os.CreateTemp("", "nbexec-*.py")
	if err != nil {
		return err
	}
	defer os.Remove(script.Name())
	if _, err := script.Write(executeScript); err != nil {
		return err
	}
	if err := script.Close(); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, r.Python, script.Name(), src, dst, filepath.Dir(src),
		fmt.Sprint(int(r.CellTimeout.Seconds())), fmt.Sprint(int(r.StartupTimeout.Seconds())), string(prov))
	cmd.Env = r.environ("PYDEVD_DISABLE_FILE_VALIDATION=1")
	// On cancellation ask the script to stop: it kills the kernel's process group (the running cell program
	// included) and writes what ran so far. If the kernel holds our pipes open, give up waiting after a while.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	// One writer for both streams: os/exec then copies them on one goroutine (two would race on tail and Log).
	var tail tail.Buffer
	out := io.MultiWriter(r.Log, &tail)
	cmd.Stdout, cmd.Stderr = out, out
	// If this process dies, whatever killed it (go test's own timeout panics and exits; SIGKILL), the script's
	// watchdog kills the script, the kernel and all they started.
	release, err := reaper.Supervise(cmd)
	if err != nil {
		return err
	}
	defer release()
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%v (%v; a long notebook needs a larger `go test -timeout`)", err, ctx.Err())
		}
		return fmt.Errorf("executing %s: %v\n%s", filepath.Base(src), err, tail.String())
	}
	return nil
}

// Here returns the Provenance of outputs computed in this process's environment: the numerics of the engine a
// cell program makes (gomlxmodel.DefaultOptions). Without a backend, Numerics is empty, and the cell programs
// fail the same way.
func Here() Provenance {
	eng, err := gomlxmodel.NewEngine(gomlxmodel.DefaultOptions())
	if err != nil {
		return Provenance{}
	}
	return Provenance{Numerics: eng.NumericsKey()}
}

// Result is what checking one notebook found.
type Result struct {
	Path      string
	Executed  *Notebook     // the executed notebook (nil if execution failed)
	File      string        // where the executed notebook was written
	Wall      time.Duration // execution wall time
	Failures  []string      // error outputs and silent Go failures: these fail the notebook
	Diffs     []string      // code cells whose sanitized outputs differ from the committed ones
	Committed *Notebook
	// Exact says the committed outputs were computed under this machine's Numerics (or do not say under which),
	// so Diffs fail the notebook; otherwise they are expected and reported only, and the outputs are another
	// realization of the chapter (Report.MarkResampled).
	Exact bool
}

// OK reports whether the notebook ran cleanly and, where exact comparison applies, reproduced its committed
// outputs.
func (r *Result) OK() bool { return len(r.Failures) == 0 && (len(r.Diffs) == 0 || !r.Exact) }

// Check executes the notebook at path into a file in outDir, then looks for failures and compares outputs with
// the committed ones using s.
func (r *Runner) Check(ctx context.Context, path, outDir string, s *Sanitizer) (*Result, error) {
	res := &Result{Path: path, File: filepath.Join(outDir, filepath.Base(path))}
	committed, err := Load(path)
	if err != nil {
		return nil, err
	}
	res.Committed = committed
	here := Here()
	res.Exact = committed.Metadata.Agentrl == nil || *committed.Metadata.Agentrl == here
	start := time.Now()
	err = r.Execute(ctx, path, res.File)
	res.Wall = time.Since(start)
	if err != nil {
		// A partial notebook may have been written: report its failures too.
		if nb, lerr := Load(res.File); lerr == nil {
			res.Executed = nb
			res.Failures = Failures(nb)
		}
		return res, err
	}
	if res.Executed, err = Load(res.File); err != nil {
		return res, err
	}
	res.Failures = Failures(res.Executed)
	res.Diffs = Compare(committed, res.Executed, s)
	if len(res.Diffs) > 0 && !res.Exact {
		res.Diffs[len(res.Diffs)-1] += "\n    " + numericsNote(committed.Metadata.Agentrl.Numerics, here.Numerics)
	}
	return res, nil
}

// numericsNote explains why outputs computed under Numerics here differ from those committed under committed
// (a different string): the bits of a run depend on the backend and, on XLA, which compiles for the processor it
// runs on, on the processor and XLA_FLAGS.
func numericsNote(committed, here string) string {
	const tail = "; the differences are expected and reported, not failures, and the book-vs-run report reads " +
		"another realization: its class 1 rules gate, its class 3 failures are reported (README, Tests)"
	switch {
	case here == "":
		return "note: no GoMLX backend here; the committed outputs were computed under " + committed + tail
	case backendOf(here) != backendOf(committed) && os.Getenv("GOMLX_BACKEND") == "":
		return fmt.Sprintf("note: the models ran on the %s backend, the committed outputs on %s (%s), whose "+
			"numbers differ; install its PJRT CPU plugin with `go run ./kernelsetup`%s", backendOf(here),
			backendOf(committed), committed, tail)
	}
	return fmt.Sprintf("note: the committed outputs were computed under %s, these under %s: a run's bits depend on "+
		"the backend and, on XLA (which compiles for the processor it runs on), on the processor and XLA_FLAGS%s",
		committed, here, tail)
}

// backendOf returns the backend part of a Numerics string.
func backendOf(numerics string) string {
	name, _, _ := strings.Cut(numerics, "/")
	return name
}
