package agentrl

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Case is one test of a program: its input list and the correct result.
type Case struct {
	Input []int
	Want  int
}

// Task is one BugFix task (the book's task dataclass): an issue, a buggy one-function program, the op that repairs
// it, and the tests. Issue has no newline for ordinary tasks; SingleTurn appends the compact source after one.
type Task struct {
	Name    string // stable name, e.g. "train/03"
	Issue   string // what the program should do; names the function, never the bug
	Source  string // the buggy program (see RunProgram for the language)
	Op      string // the repair op that fixes Source (one of Ops)
	Kind    string // what the program computes: "count", "sum", "squares" or "doubles"
	Visible []Case // what the test tool runs and reports as "passed k of n"
	Hidden  []Case // what decides the verdict on submit
}

// Splits of MakeTasks.
const (
	SplitTrain   = "train"
	SplitHeldout = "heldout"
	SplitAll     = "all"
)

const (
	numTrain   = 20
	numHeldout = 10
	tasksSeed  = 12
)

// namePool holds the identifiers used by the tasks and by RandomizeNames. It is disjoint from the keywords, the
// issue's words and the gym's words, so renaming never touches anything but identifiers.
var namePool = []string{
	"acc", "total", "tally", "score", "res", "out", "agg", "val", "num", "cur", "elem", "item", "x", "v", "w", "y",
	"z", "k", "m", "p", "q", "a", "b", "c", "data", "vals", "nums", "arr", "seq", "lst", "row", "xs", "ys", "bag",
	"pile", "batch", "grab", "gauge", "measure", "scan", "probe", "reckon", "weigh", "sift", "gather", "metric",
	"poll", "rate",
}

// NamePool returns a copy of the identifier pool of RandomizeNames.
func NamePool() []string { return append([]string(nil), namePool...) }

var taskKinds = []struct{ kind, verb, noun, update string }{
	{"count", "count", "items", "1"},
	{"sum", "sum", "items", "X"},
	{"squares", "sum", "squares", "X * X"},
	{"doubles", "sum", "doubles", "X * 2"},
}

// MakeTasks is arl.make_tasks: the tasks of a split in a stable order. "train" has 20 tasks, 4 per op, with the ops
// interleaved so that train[:2], train[:4], train[::5] and train[1::5] mix ops; "heldout" has 10, 2 per op, so the
// best single blind op passes exactly 0.200 of them; "all" is train followed by heldout. Every task's hidden tests
// fail its buggy source and every wrong op, and pass its op's repair.
func MakeTasks(split string) ([]Task, error) {
	var lo, hi int
	switch split {
	case SplitTrain:
		lo, hi = 0, numTrain
	case SplitHeldout:
		lo, hi = numTrain, numTrain+numHeldout
	case SplitAll:
		lo, hi = 0, numTrain+numHeldout
	default:
		return nil, fmt.Errorf("make tasks: unknown split %q (want %q, %q or %q)", split, SplitTrain, SplitHeldout, SplitAll)
	}
	tasks := make([]Task, 0, hi-lo)
	for i := lo; i < hi; i++ {
		t, err := makeTask(i)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// makeTask builds the task with global index i (train 0..19, then heldout 20..29).
func makeTask(i int) (Task, error) {
	rng := NewRNG(uint64(tasksSeed*1000 + i))
	// The op, the kind and the direction are spread so that neither the kind nor the direction (both visible in
	// the issue) predicts the op: over the train split each op meets every kind once and each direction twice.
	var name string
	var op, block int
	if i < numTrain {
		name, op, block = fmt.Sprintf("train/%02d", i), (i+i/5)%len(repairOps), i/5
	} else {
		j := i - numTrain
		name, op, block = fmt.Sprintf("heldout/%02d", j), j%len(repairOps), 2*(j/5)+1
	}
	k := taskKinds[(op+block)%len(taskKinds)]
	above := (op+block/2)%2 == 0
	if i >= numTrain {
		above = (op+block/2)%2 == 1
	}
	limit, dir, cmp := 1+(i*5)%6, "above", ">"
	if !above {
		limit, dir, cmp = limit+2, "below", "<"
	}
	perm := rng.Perm(len(namePool))
	fn, list, x, acc := namePool[perm[0]], namePool[perm[1]], namePool[perm[2]], namePool[perm[3]]
	update := strings.ReplaceAll(k.update, "X", x)
	correct := strings.Join([]string{
		fmt.Sprintf("def %s ( %s ) :", fn, list),
		fmt.Sprintf("  %s = 0", acc),
		fmt.Sprintf("  for %s in %s :", x, list),
		fmt.Sprintf("    if %s %s %d :", x, cmp, limit),
		fmt.Sprintf("      %s = %s + %s", acc, acc, update),
		fmt.Sprintf("  return %s", acc),
	}, "\n")
	buggy, err := ApplyOp(correct, repairOps[op])
	if err != nil {
		return Task{}, fmt.Errorf("task %s: %v", name, err) // programmer error: every generated program has every site
	}
	first := limit + 1
	if !above {
		first = limit - 1
	}
	inputs := [][]int{{limit}, {first, limit, 2}}
	for len(inputs) < 9 {
		xs := make([]int, 1+rng.IntN(5))
		for j := range xs {
			xs[j] = rng.IntN(10)
		}
		inputs = append(inputs, xs)
	}
	cases := make([]Case, len(inputs))
	for c, xs := range inputs {
		want, err := RunProgram(correct, xs)
		if err != nil {
			return Task{}, fmt.Errorf("task %s: %v", name, err)
		}
		cases[c] = Case{Input: xs, Want: want}
	}
	return Task{
		Name:    name,
		Issue:   fmt.Sprintf("%s should %s %s %s %d", fn, k.verb, k.noun, dir, limit),
		Source:  buggy,
		Op:      repairOps[op],
		Kind:    k.kind,
		Hidden:  cases[:6],
		Visible: cases[6:],
	}, nil
}

// Passes reports how many of the cases the program source passes (a program that fails to run fails the case).
func Passes(source string, cases []Case) int {
	n := 0
	for _, c := range cases {
		if got, err := RunProgram(source, c.Input); err == nil && got == c.Want {
			n++
		}
	}
	return n
}

// identifiers returns the distinct identifiers of a source in order of first appearance.
func identifiers(source string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.Fields(source) {
		if isName(w) && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// RandomizeNames is arl.randomize_names: a copy of t whose identifiers (function, parameter, loop variable,
// accumulator) are replaced by distinct names drawn from the pool with rng, consistently in Source and Issue (also
// the source a SingleTurn issue embeds). It draws one permutation of the pool from rng, the same number of
// values whatever the task.
func RandomizeNames(t Task, rng *rand.Rand) Task {
	ids := identifiers(t.Source)
	perm := rng.Perm(len(namePool))
	rename := make(map[string]string, len(ids))
	for i, id := range ids {
		if i < len(perm) {
			rename[id] = namePool[perm[i]]
		}
	}
	mapLine := func(line string) string {
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		toks := strings.Fields(line)
		for i, w := range toks {
			if r, ok := rename[w]; ok {
				toks[i] = r
			}
		}
		return indent + strings.Join(toks, " ")
	}
	mapText := func(text string) string {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = mapLine(l)
		}
		return strings.Join(lines, "\n")
	}
	t.Source, t.Issue = mapText(t.Source), mapText(t.Issue)
	return t
}

// BlindPass is the pass rate of always guessing op without reading: on each task the one call `edit op`, then
// submit, graded by the hidden tests. Its best over Ops is the blind ceiling a policy that never reads cannot
// beat on average (the book's 0.200 on its held-out tasks; ours is 0.200 too, see TestBlindCeiling).
func BlindPass(tasks []Task, op string) (float64, error) {
	if len(tasks) == 0 {
		return 0, fmt.Errorf("blind pass: no tasks")
	}
	if !slices.Contains(repairOps[:], op) {
		return 0, fmt.Errorf("blind pass: %q is not a repair op (want one of %v)", op, repairOps)
	}
	env, err := NewEditBudgetEnv(2, nil, 1)
	if err != nil {
		return 0, err
	}
	passed := 0
	for _, task := range tasks {
		env.Reset(task)
		if _, _, done, _ := env.Step(CallText(ToolEdit, op)); done {
			return 0, fmt.Errorf("blind pass: %s ended the episode", CallText(ToolEdit, op))
		}
		if _, _, _, info := env.Step(CallText(ToolSubmit)); info.HiddenPass {
			passed++
		}
	}
	return float64(passed) / float64(len(tasks)), nil
}
