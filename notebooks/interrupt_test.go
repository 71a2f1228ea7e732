package notebooks

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
)

//go:embed interrupt.py
var interruptScript []byte

// interruptedCell trains a base agent far longer than the test waits, in the result store of $AGENTRL_CACHE.
const interruptedCell = `import (
	"fmt"

	"github.com/agentrl-go/agentrl/agentrl"
)

%%
all, err := agentrl.MakeTasks("all")
if err != nil {
	panic(err)
}
store, err := agentrl.DefaultStore()
if err != nil {
	panic(err)
}
c := agentrl.DefaultBaseConfig()
c.Demos, c.MappingDemos, c.Steps, c.BatchSize = 64, 64, 1_000_000, 2
_, err = agentrl.BaseFrom(store, agentrl.BuildTokenizer(all), c)
fmt.Println(err)
`

// TestInterruptResumes interrupts a training cell through Jupyter, as a reader's "interrupt the kernel" does
// (GoNB forwards it to the cell's program as SIGINT), runs the cell again and interrupts it once more: the first
// run saves its progress, the second resumes from exactly there and gets further. (That a resumed run is
// bit-identical to an uninterrupted one is agentrl's TestTrainedRunResumes and TestBaseResumes.)
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
	chapter, err := Chapter(".")
	if err != nil || len(chapter) == 0 {
		t.Fatalf("no notebook to take the link cell from (%v)", err)
	}
	nb, err := Load(chapter[0])
	if err != nil {
		t.Fatal(err)
	}
	link := nb.CodeCells()[0].Source // the cell that links a notebook to the repository's module
	cmd := exec.CommandContext(testContext(t), r.Python, script, dir, fmt.Sprint(int(r.StartupTimeout.Seconds())),
		"120", "1", string(link), interruptedCell, "cache: computing", "cache: resuming")
	cmd.Env = r.environ("AGENTRL_CACHE="+t.TempDir(), "PYDEVD_DISABLE_FILE_VALIDATION=1")
	cmd.Stderr = r.Log
	// On cancellation ask the script to stop, so that it shuts the kernel down (GoNB then removes its temporary
	// folder and stops gopls); SIGKILL, the default, would leave both behind.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	setDeathSignal(cmd)
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
	stopped := regexp.MustCompile(`interrupted after step (\d+) of 1000000; progress saved`)
	resumed := regexp.MustCompile(`cache: resuming rl_base-\w+\.partial after step (\d+)`)
	step := func(re *regexp.Regexp, text string) int {
		m := re.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no %q in\n%s", re, text)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	first := step(stopped, runs[1])
	if from := step(resumed, runs[2]); from != first {
		t.Errorf("second run resumed after step %d, the first stopped after step %d", from, first)
	}
	if second := step(stopped, runs[2]); second <= first {
		t.Errorf("second run stopped after step %d, not beyond the first's %d", second, first)
	}
}
