package harness

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/notebooks/harness/internal/reaper"
)

//go:embed interrupt.py
var interruptScript []byte

// interruptedCell trains a base agent far longer than the test waits, in the result store of $AGENTRL_CACHE.
const interruptedCell = `import (
	"fmt"
	"time"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/runs"
)

%%
ch, err := ch12.Setup() // as a chapter cell: the notices go to the status display
if err != nil {
	panic(err)
}
ch.Store.ProgressEvery = time.Second // a progress line shows that a step has ended: the test interrupts after it
c := agentrl.DefaultBaseConfig()
c.Demos, c.MappingDemos, c.Steps, c.BatchSize = 64, 64, 1_000_000, 2
_, err = runs.Base(ch.Store, agentrl.BaseRun{Engine: ch.Engine, Config: c, Tasks: ch.Train, Tok: ch.Tok})
fmt.Println(err)
`

// TestInterruptResumes interrupts a training cell through Jupyter, as a reader's "interrupt the kernel" does
// (GoNB forwards it to the cell's program as SIGINT), runs the cell again and interrupts it once more, each time a
// second after its first progress line (a step has ended): the first run saves its progress at once and again at
// the end of its step, the second resumes from exactly there and gets further. (That a resumed run is
// bit-identical to an uninterrupted one is runs' TestTrainResumes.)
func TestInterruptResumes(t *testing.T) {
	r := newRunner(t)
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "interrupt.py")
	if err := os.WriteFile(script, interruptScript, 0o644); err != nil {
		t.Fatal(err)
	}
	chapter, err := Chapter("..")
	if err != nil || len(chapter) == 0 {
		t.Fatalf("no notebook to take the link cell from (%v)", err)
	}
	nb, err := Load(chapter[0])
	if err != nil {
		t.Fatal(err)
	}
	link := nb.CodeCells()[0].Source // the cell that links a notebook to the repository's module
	cmd := exec.CommandContext(testContext(t), r.Python, script, dir, fmt.Sprint(int(r.StartupTimeout.Seconds())),
		"120", "1", string(link), interruptedCell, "progress:", "progress:")
	cmd.Env = r.environ("AGENTRL_CACHE="+t.TempDir(), "PYDEVD_DISABLE_FILE_VALIDATION=1")
	cmd.Stderr = r.Log
	// On cancellation ask the script to stop, so that it shuts the kernel down (GoNB then removes its temporary
	// folder and stops gopls); SIGKILL, the default, would leave both behind.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	release, err := reaper.Supervise(cmd) // and if this test dies, kill the script, the kernel and all they started
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("interrupt.py: %v", err)
	}
	var runs []string
	if err := json.Unmarshal(out, &runs); err != nil || len(runs) != 3 {
		t.Fatalf("interrupt.py printed %q (%v)", out, err)
	}
	for i, run := range runs {
		t.Logf("execution %d:\n%s", i, run)
	}
	// A run saves its progress as soon as it is interrupted, and again when its step ends; GoNB kills it if that
	// takes more than 5 seconds (a slow or busy machine), and then the first save is what the next run resumes.
	savedAtOnce := regexp.MustCompile(`cache: interrupt: progress after step (\d+) saved`)
	stopped := regexp.MustCompile(`interrupted after step (\d+) of 1000000; progress saved`)
	resumed := regexp.MustCompile(`cache: resuming rl_base-\w+\.partial after step (\d+)`)
	step := func(re *regexp.Regexp, text string) (int, bool) {
		m := re.FindStringSubmatch(text)
		if m == nil {
			return 0, false
		}
		n, _ := strconv.Atoi(m[1])
		return n, true
	}
	saved := func(run int) int { // the step the run's progress was saved after
		early, ok := step(savedAtOnce, runs[run])
		if !ok {
			t.Fatalf("execution %d: the interrupt did not save its progress at once", run)
		}
		last, ok := step(stopped, runs[run])
		switch {
		case !ok:
			t.Logf("execution %d was killed before its step ended; its progress is the interrupt's save", run)
			return early
		case early > last:
			t.Errorf("execution %d: the interrupt saved step %d at once, after the run's last step %d", run, early, last)
		}
		return last
	}
	first := saved(1)
	if from, ok := step(resumed, runs[2]); !ok || from != first {
		t.Errorf("second run resumed after step %d (found: %v), the first saved its progress after step %d", from, ok, first)
	}
	if second := saved(2); second <= first {
		t.Errorf("second run saved its progress after step %d, not beyond the first's %d", second, first)
	}
}
