package agentrl

import (
	"slices"
	"strings"
	"testing"
)

func mustTasks(t testing.TB, split string) []Task {
	t.Helper()
	tasks, err := MakeTasks(split)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

func TestMakeTasksSplits(t *testing.T) {
	for _, c := range []struct {
		split string
		n     int
		perOp int
	}{{SplitTrain, 20, 4}, {SplitHeldout, 10, 2}, {SplitAll, 30, 6}} {
		tasks := mustTasks(t, c.split)
		if len(tasks) != c.n {
			t.Fatalf("%s: %d tasks, want %d", c.split, len(tasks), c.n)
		}
		count := map[string]int{}
		for _, task := range tasks {
			count[task.Op]++
			if strings.Contains(task.Issue, "\n") {
				t.Errorf("%s: issue has a newline", task.Name)
			}
			if n := len(strings.Fields(task.Issue)); n != 6 {
				t.Errorf("%s: issue %q has %d words, want 6", task.Name, task.Issue, n)
			}
			for _, op := range Ops() {
				if strings.Contains(task.Issue, op) || strings.Contains(task.Source, op) {
					t.Errorf("%s: op %s named in the task text", task.Name, op)
				}
			}
		}
		for _, op := range Ops() {
			if count[op] != c.perOp {
				t.Errorf("%s: %d tasks for %s, want %d", c.split, count[op], op, c.perOp)
			}
		}
	}
	if _, err := MakeTasks("test"); err == nil || !strings.Contains(err.Error(), "unknown split") {
		t.Errorf("unknown split: err = %v", err)
	}
	// Stable order: train then heldout, and the same tasks on every call.
	all, train, heldout := mustTasks(t, SplitAll), mustTasks(t, SplitTrain), mustTasks(t, SplitHeldout)
	if !slices.EqualFunc(all, append(train, heldout...), func(a, b Task) bool { return a.Name == b.Name && a.Source == b.Source }) {
		t.Error("all != train + heldout")
	}
}

// The chapter slices the train split; each slice must mix ops.
func TestTrainSlicesMixOps(t *testing.T) {
	train := mustTasks(t, SplitTrain)
	stride := func(start int) []Task {
		var out []Task
		for i := start; i < len(train); i += 5 {
			out = append(out, train[i])
		}
		return out
	}
	for name, s := range map[string][]Task{"[:2]": train[:2], "[:4]": train[:4], "[::5]": stride(0), "[1::5]": stride(1)} {
		ops := map[string]bool{}
		for _, task := range s {
			ops[task.Op] = true
		}
		if len(ops) != len(s) {
			t.Errorf("train%s ops %v are not all distinct", name, ops)
		}
	}
	// Neither the kind nor the direction (both in the issue) predicts the op on the train split.
	for _, op := range Ops() {
		kinds, dirs := map[string]int{}, map[bool]int{}
		for _, task := range train {
			if task.Op == op {
				kinds[task.Kind]++
				dirs[strings.Contains(task.Issue, "above")]++
			}
		}
		if len(kinds) != 4 || dirs[true] != 2 || dirs[false] != 2 {
			t.Errorf("%s: kinds %v, above/below %v", op, kinds, dirs)
		}
	}
}

// Hidden tests decide: the buggy source fails, the right op passes, every wrong op fails; the oracle finds the op
// from the source, its read projection and a renamed copy.
func TestHiddenTestsDecide(t *testing.T) {
	rng := NewRNG(1)
	for _, task := range mustTasks(t, SplitAll) {
		if n := Passes(task.Source, task.Hidden); n == len(task.Hidden) {
			t.Errorf("%s: the buggy source passes the hidden tests", task.Name)
		}
		for _, op := range Ops() {
			src, err := ApplyOp(task.Source, op)
			if err != nil {
				t.Fatalf("%s: %v", task.Name, err)
			}
			pass := Passes(src, task.Hidden) == len(task.Hidden)
			if pass != (op == task.Op) {
				t.Errorf("%s (%s): after %s hidden pass = %v", task.Name, task.Op, op, pass)
			}
			if back, _ := ApplyOp(src, op); back != task.Source {
				t.Errorf("%s: %s applied twice does not restore the source", task.Name, op)
			}
		}
		for _, src := range []string{task.Source, CompactSource(task.Source), RandomizeNames(task, rng).Source, SingleTurn(task).Issue} {
			if op, err := InferOp(src); err != nil || op != task.Op {
				t.Errorf("%s: InferOp = %q, %v; want %s", task.Name, op, err, task.Op)
			}
		}
	}
}

// The blind ceiling: the best single op, applied without reading, passes exactly 0.200 of held-out tasks.
// BlindPass is checked against the same guess played through an Episode, as a policy would.
func TestBlindCeiling(t *testing.T) {
	tok := BuildTokenizer(mustTasks(t, SplitAll))
	heldout := mustTasks(t, SplitHeldout)
	best := 0.0
	for _, op := range Ops() {
		var trajs []Trajectory
		for _, task := range heldout {
			env, _ := NewEditBudgetEnv(6, nil, 1)
			e := NewEpisode(env, task, tok, 6, ContextLen)
			e.Act(tok.EncodeCall(ToolEdit, op), nil)
			e.Act(tok.EncodeCall(ToolSubmit), nil)
			trajs = append(trajs, MakeTrajectory(e))
		}
		s := BehaviorStats(trajs)
		got, err := BlindPass(heldout, op)
		if err != nil || got != s.PassRate {
			t.Errorf("BlindPass(held-out, %s) = %v, %v; the episodes pass %v", op, got, err, s.PassRate)
		}
		t.Logf("blind %-15s held-out pass %.3f", op, s.PassRate)
		best = max(best, s.PassRate)
	}
	if best != 0.2 {
		t.Errorf("blind ceiling %.3f, want 0.200", best)
	}
}

func TestBlindPassErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tasks []Task
		op    string
	}{
		{"no tasks", nil, OpInit},
		{"unknown op", mustTasks(t, SplitHeldout), "fix_everything"},
		{"a tool, not an op", mustTasks(t, SplitHeldout), ToolSubmit},
	} {
		if got, err := BlindPass(tc.tasks, tc.op); err == nil {
			t.Errorf("%s: BlindPass = %v, want an error", tc.name, got)
		}
	}
}

func TestRandomizeNames(t *testing.T) {
	tasks := mustTasks(t, SplitAll)
	reserved := map[string]bool{}
	for _, task := range tasks {
		for _, w := range strings.Fields(task.Issue)[1:] {
			reserved[w] = true
		}
	}
	for _, w := range append(append([]string{}, gymWords...), Ops()...) {
		reserved[w] = true
	}
	for _, w := range namePool {
		if reserved[w] || !isName(w) {
			t.Errorf("pool name %q collides with a gym word or is no identifier", w)
		}
	}
	for _, task := range tasks {
		a, b := RandomizeNames(task, NewRNG(5)), RandomizeNames(task, NewRNG(5))
		if a.Source != b.Source || a.Issue != b.Issue {
			t.Fatalf("%s: renaming is not deterministic", task.Name)
		}
		if strings.Fields(a.Issue)[0] != strings.Fields(a.Source)[1] {
			t.Errorf("%s: issue names %q, source defines %q", task.Name, strings.Fields(a.Issue)[0], strings.Fields(a.Source)[1])
		}
		if len(identifiers(a.Source)) != len(identifiers(task.Source)) {
			t.Errorf("%s: renaming merged identifiers: %q", task.Name, a.Source)
		}
		fixed, _ := ApplyOp(a.Source, task.Op)
		if Passes(fixed, task.Hidden) != len(task.Hidden) {
			t.Errorf("%s: renamed and repaired source fails: %q", task.Name, fixed)
		}
		// Renaming a single-turn task renames the embedded source the same way.
		if got, want := RandomizeNames(SingleTurn(task), NewRNG(9)), SingleTurn(RandomizeNames(task, NewRNG(9))); got.Issue != want.Issue || got.Source != want.Source {
			t.Errorf("%s: single-turn renaming\n%q\nwant\n%q", task.Name, got.Issue, want.Issue)
		}
	}
	rng := NewRNG(3)
	seen := map[string]bool{}
	for range 20 {
		seen[RandomizeNames(tasks[0], rng).Source] = true
	}
	if len(seen) < 15 {
		t.Errorf("only %d distinct renamings in 20 draws", len(seen))
	}
}
