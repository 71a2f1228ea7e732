package runs_test

import (
	"bytes"
	"encoding/gob"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/runs"
	"github.com/agentrl-go/agentrl/store"
)

// plainEnv makes Cfg's environments: an environment of the test's own, whose base agent the store verifies.
type plainEnv struct{ Cfg agentrl.RLConfig }

func (e plainEnv) NewEnv() (agentrl.Env, error) { return agentrl.MakeEnv(e.Cfg) }

// baseChildEnv names the store of the program TestBaseChild is; baseChildGobEnv, when set, makes it gob-encode a
// value of a type of its own first.
const baseChildEnv, baseChildGobEnv = "RUNS_TEST_BASE_CHILD", "RUNS_TEST_BASE_CHILD_GOB"

// smallBase is a base agent in plainEnv with a small recipe.
func smallBase(t *testing.T) agentrl.BaseRun {
	t.Helper()
	all, err := agentrl.MakeTasks(agentrl.SplitAll)
	if err != nil {
		t.Fatal(err)
	}
	train, err := agentrl.MakeTasks(agentrl.SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	recipe := agentrl.DefaultBaseConfig()
	recipe.Demos, recipe.MappingDemos, recipe.Steps, recipe.BatchSize = 8, 0, 2, 4
	return agentrl.BaseRun{Engine: runs.TestEngine(), Config: recipe, Tasks: train, Tok: agentrl.BuildTokenizer(all),
		Env: plainEnv{agentrl.DefaultRLConfig()}}
}

// TestBaseChild is one program of TestBaseVerifiedWhateverRanBefore: it makes or loads smallBase in the store at
// $RUNS_TEST_BASE_CHILD, its notices on the standard output.
func TestBaseChild(t *testing.T) {
	dir := os.Getenv(baseChildEnv)
	if dir == "" {
		t.Skip("a program of TestBaseVerifiedWhateverRanBefore")
	}
	if os.Getenv(baseChildGobEnv) != "" { // as a cell does that computes a held-out evaluation first (ch12.HeldOut)
		if err := gob.NewEncoder(io.Discard).Encode(agentrl.Stats{}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Notices = os.Stdout
	if _, err := runs.Base(s, smallBase(t)); err != nil {
		t.Fatal(err)
	}
}

// TestBaseVerifiedWhateverRanBefore checks that a base agent in an environment of one's own, stored by one program,
// is verified and loaded by the next whatever each ran before it: here the first gob-encodes a value of another
// type first, which makes gob number the types of the run's record otherwise in that process; then this test's
// process, which ran other tests, loads it too.
func TestBaseVerifiedWhateverRanBefore(t *testing.T) {
	if os.Getenv(baseChildEnv) != "" {
		t.Skip("parent test")
	}
	if testing.Short() {
		t.Skip("starts two processes")
	}
	dir := t.TempDir()
	program := func(env ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestBaseChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), append([]string{baseChildEnv + "=" + dir}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("program: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := program(baseChildGobEnv + "=1"); !strings.Contains(out, "cache: computed rl_base-") {
		t.Fatalf("the first program did not compute the base agent:\n%s", out)
	}
	if out := program(); !strings.Contains(out, "cache: verified rl_base-") || strings.Contains(out, "computed otherwise") {
		t.Errorf("the next program: want the base agent verified and loaded:\n%s", out)
	}
	var log bytes.Buffer
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Notices = &log
	if _, err := runs.Base(s, smallBase(t)); err != nil || !strings.Contains(log.String(), "cache: verified rl_base-") {
		t.Errorf("this process: %v, want the base agent verified and loaded:\n%s", err, log.String())
	}
}
