package agentrl

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
)

// todayTasksHash is the SHA-256 of the JSON of MakeTasks("all") as the book's make_tasks generator made them
// before TaskGen existed (issue #41): the zero TaskGen must keep them bit for bit.
const todayTasksHash = "9bd336c99841545c0d22e159db3de5a565e6db5d09658e777f13a8668bd680ae"

func tasksHash(t testing.TB, tasks []Task) string {
	t.Helper()
	b, err := json.Marshal(tasks)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func TestTaskGenZeroIsMakeTasks(t *testing.T) {
	if h := tasksHash(t, mustTasks(t, SplitAll)); h != todayTasksHash {
		t.Errorf("MakeTasks(all) hash %s, want %s (today's tasks changed)", h, todayTasksHash)
	}
	zero, err := TaskGen{}.Make(SplitAll)
	if err != nil {
		t.Fatal(err)
	}
	seed12, err := TaskGen{Seed: tasksSeed}.Make(SplitAll)
	if err != nil {
		t.Fatal(err)
	}
	if tasksHash(t, zero) != todayTasksHash || tasksHash(t, seed12) != todayTasksHash {
		t.Error("TaskGen{} or TaskGen{Seed: 12} differs from MakeTasks")
	}
}

func TestTaskGenValidate(t *testing.T) {
	for _, g := range []TaskGen{{Distractors: -1}, {Distractors: 4}, {HardShare: 0.25}, {HardShare: 2}, {HardShare: -0.5}} {
		if _, err := g.Make(SplitTrain); err == nil {
			t.Errorf("%+v: no error", g)
		}
	}
	if _, err := (TaskGen{Distractors: 2}).Make("test"); err == nil || !strings.Contains(err.Error(), "unknown split") {
		t.Errorf("unknown split: err = %v", err)
	}
}

// The numbers of issue #41 for today's generator: a bag-of-words probe names the op of every held-out task, the
// issue wording gives away 0.90 of the training ops (18 wordings), and the visible tests miss 9 of 120 wrong ops.
func TestCheckTodaysTasks(t *testing.T) {
	c, err := CheckTasks(TaskGen{}, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.OK() {
		t.Errorf("violations: %v", c.Violations)
	}
	if c.BlindHeldout != 0.2 || c.BlindTrain != 0.2 {
		t.Errorf("blind ceilings %.3f %.3f, want 0.200", c.BlindHeldout, c.BlindTrain)
	}
	if c.BoW < 0.99 || c.Bigram < 0.99 {
		t.Errorf("probes BoW %.3f bigram %.3f, want about 1", c.BoW, c.Bigram)
	}
	if c.Memorized != 0.9 || c.Wordings != 18 {
		t.Errorf("memorized %.2f over %d wordings, want 0.90 over 18", c.Memorized, c.Wordings)
	}
	if c.Misses != 9 || c.WrongOps != 120 {
		t.Errorf("visible misses %d of %d, want 9 of 120", c.Misses, c.WrongOps)
	}
	if !c.InVocab || len(c.NewWords) != 0 {
		t.Errorf("in vocab %v, new words %v", c.InVocab, c.NewWords)
	}
	if c.MaxTokens != 37 || c.MeanEpisode < 70 || c.MeanEpisode > 76 {
		t.Errorf("tokens: source max %d, episode mean %.1f; want 37 and about 73", c.MaxTokens, c.MeanEpisode)
	}
}

// Every setting of the knobs keeps the chapter's invariants (balance, hidden tests decide, InferOp, blind ceiling
// 0.200 on both splits, no new word), and StrictVisible leaves no visible miss.
func TestTaskGenInvariants(t *testing.T) {
	for _, d := range []int{0, 1, 2, 3} {
		for _, h := range []float64{0, 0.5, 1} {
			for _, shared := range []bool{false, true} {
				for _, gen := range []TaskGen{{StrictVisible: false}, {StrictVisible: true}, {StrictVisible: true, SeenIssues: shared}} {
					for _, seed := range []uint64{0, 7} {
						strict := gen.StrictVisible
						g := TaskGen{Distractors: d, HardShare: h, SharedIssues: shared, SeenIssues: gen.SeenIssues, StrictVisible: strict, Seed: seed}
						c, err := CheckTasks(g, CheckOptions{SkipProbes: true})
						if err != nil {
							t.Fatalf("%s: %v", g, err)
						}
						if !c.OK() {
							t.Errorf("%s: %v", g, c.Violations)
						}
						if strict && c.Misses != 0 {
							t.Errorf("%s: %d visible misses", g, c.Misses)
						}
						if shared && c.Memorized != 0.2 {
							t.Errorf("%s: memorized %.2f, want 0.20", g, c.Memorized)
						}
						if len(c.NewWords) != 0 {
							t.Errorf("%s: new words %v", g, c.NewWords)
						}
					}
				}
			}
		}
	}
}

// The knobs do what they say: distractor forms and hard tasks appear, balanced over ops and equal in both splits;
// kinds and directions still meet every op evenly on the train split.
func TestTaskGenKnobs(t *testing.T) {
	g := TaskGen{Distractors: 3, HardShare: 0.5, SharedIssues: true}
	train, err := g.Make(SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	heldout, err := g.Make(SplitHeldout)
	if err != nil {
		t.Fatal(err)
	}
	isHard := func(task Task) bool { return strings.Count(task.Source, " if ") == 2 }
	for _, s := range [][]Task{train, heldout} {
		hard := map[string]int{}
		for _, task := range s {
			if isHard(task) {
				hard[task.Op]++
				if n := len(strings.Fields(task.Issue)); n != 8 {
					t.Errorf("%s: hard issue %q", task.Name, task.Issue)
				}
			}
		}
		for _, op := range Ops() {
			if hard[op] != len(s)/10 {
				t.Errorf("%d tasks: %d hard %s tasks, want %d", len(s), hard[op], op, len(s)/10)
			}
		}
	}
	for _, op := range Ops() {
		kinds, dirs := map[string]int{}, map[bool]int{}
		for _, task := range train {
			if task.Op == op {
				kinds[task.Kind]++
				dirs[strings.Contains(strings.Fields(task.Issue)[4], "above")]++
			}
		}
		if len(kinds) != 4 || dirs[true] != 2 || dirs[false] != 2 {
			t.Errorf("%s: kinds %v, above/below %v", op, kinds, dirs)
		}
	}
	all := strings.Join(func() []string {
		var out []string
		for _, task := range append(train, heldout...) {
			out = append(out, task.Source)
		}
		return out
	}(), "\n")
	for _, form := range []string{"[ 0 : ]", "return 0 +", " + 1 :", " - 1 :", " - 1 >=", " + 1 <="} {
		if !strings.Contains(all, form) {
			t.Errorf("no source has the distractor form %q", form)
		}
	}
}

// The program language's repair ops on TaskGen's alternative forms: each toggles a bug in and out, and InferOp
// reads the bug by where its tokens are.
func TestApplyOpDistractorForms(t *testing.T) {
	const src = "def f ( xs ) :\n  acc = 0\n  for x in xs [ 0 : ] :\n    if x - 1 >= 3 :\n      if x <= 8 - 1 :\n        acc = acc + x - 1\n  return 0 + acc"
	for _, c := range []struct{ op, line string }{
		{OpOffByOne, "  for x in xs [ 1 : ] :"},
		{OpComparison, "    if x - 1 > 3 :"},
		{OpReturn, "  return 0"},
	} {
		bug, err := ApplyOp(src, c.op)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(bug+"\n", c.line+"\n") {
			t.Errorf("%s: %q lacks %q", c.op, bug, c.line)
		}
		if op, err := InferOp(bug); err != nil || op != c.op {
			t.Errorf("%s: InferOp = %q, %v", c.op, op, err)
		}
		fixed, _ := ApplyOp(bug, c.op)
		for _, xs := range [][]int{{4, 5, 7, 2}, {8, 4}, {}} {
			want, err1 := RunProgram(src, xs)
			got, err2 := RunProgram(fixed, xs)
			if err1 != nil || err2 != nil || got != want {
				t.Errorf("%s: repaired %v = %d, %v; want %d, %v", c.op, xs, got, err2, want, err1)
			}
		}
	}
	if _, err := InferOp(src); err == nil {
		t.Errorf("InferOp found a bug in the correct %q", src)
	}
	for cond, buggy := range map[string]bool{"x > 3": false, "x >= 3": true, "x >= 3 + 1": false, "x > 3 + 1": true,
		"x - 1 >= 3": false, "x - 1 > 3": true, "x < 5": false, "x <= 5": true, "x <= 5 - 1": false, "x + 1 < 5": true} {
		if got := condBuggy(strings.Fields("if " + cond + " :")); got != buggy {
			t.Errorf("condBuggy(%q) = %v, want %v", cond, got, buggy)
		}
	}
}

func TestIssueMemorization(t *testing.T) {
	src := "def f ( xs ) :\n  acc = 0\n  for x in xs :\n    if x > 1 :\n      acc = acc + 1\n  return acc"
	mk := func(issue, op string) Task { return Task{Issue: issue, Source: src, Op: op} }
	m, n := IssueMemorization([]Task{mk("f should count items above 1", OpInit), mk("f should count items above 1", OpReturn),
		mk("f should count items above 1", OpReturn), mk("f should sum items above 1", OpInit)})
	if m != 0.75 || n != 2 {
		t.Errorf("memorization %.2f over %d wordings, want 0.75 over 2", m, n)
	}
}

// The probes learn a planted cue and cannot beat chance without one.
func TestProbeAccuracy(t *testing.T) {
	tasks := mustTasks(t, SplitAll)
	if acc := ProbeAccuracy(tasks[:20], tasks[20:], BagOfWords, 10, NewRNG(3)); acc < 0.95 {
		t.Errorf("BoW on today's tasks %.3f, want about 1", acc)
	}
	// Every task the same source: the op is unreadable, so the probe is at about chance.
	same := make([]Task, len(tasks))
	for i, task := range tasks {
		same[i] = task
		same[i].Source = tasks[0].Source
	}
	if acc := ProbeAccuracy(same[:20], same[20:], Bigrams, 10, NewRNG(3)); acc > 0.3 {
		t.Errorf("bigram probe on identical sources %.3f, want about chance (0.2)", acc)
	}
	if got := strings.Join(Bigrams([]string{"a", "b"}), "|"); got != "a|b|^ a|a b|b $" {
		t.Errorf("Bigrams = %q", got)
	}
}

// SeenIssues words every held-out task as a training task is worded (the function's name aside) and changes nothing
// of the training split; without it, shared wordings give the held-out split wordings of its own.
func TestTaskGenSeenIssues(t *testing.T) {
	wordings := func(g TaskGen, split string) map[string]bool {
		tasks, err := g.Make(split)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, task := range tasks {
			_, rest, _ := strings.Cut(task.Issue, " ")
			out[rest] = true
		}
		return out
	}
	for _, d := range []int{0, 2} {
		shared := TaskGen{Distractors: d, HardShare: 0.5, SharedIssues: true}
		seen := shared
		seen.SeenIssues = true
		trainShared, trainSeen := wordings(shared, SplitTrain), wordings(seen, SplitTrain)
		if !maps.Equal(trainShared, trainSeen) {
			t.Errorf("%s: training wordings %v, want %v", seen, trainSeen, trainShared)
		}
		for w := range wordings(seen, SplitHeldout) {
			if !trainSeen[w] {
				t.Errorf("%s: held-out wording %q is not a training wording", seen, w)
			}
		}
		for w := range wordings(shared, SplitHeldout) {
			if trainShared[w] {
				t.Errorf("%s: held-out wording %q is a training wording", shared, w)
			}
		}
	}
	if err := (TaskGen{SeenIssues: true}).Validate(); err == nil {
		t.Error("SeenIssues without SharedIssues: no error")
	}
}

// RedrawForms gives each task the writings of its distractor sites that its tests grade alike, CheckTasks holds
// every one of them to the chapter's invariants, and RandomizeNames writes an episode in one of them; without
// Forms, RandomizeNames draws as before (one permutation of the pool).
func TestTaskGenRedrawForms(t *testing.T) {
	for _, d := range []int{1, 2, 3} {
		g := TaskGen{Distractors: d, HardShare: 0.5, SharedIssues: true, SeenIssues: true, StrictVisible: true, RedrawForms: true}
		c, err := CheckTasks(g, CheckOptions{SkipProbes: true})
		if err != nil {
			t.Fatal(err)
		}
		if !c.OK() || c.Forms < 2 {
			t.Errorf("%s: forms %.1f per task, violations %v", g, c.Forms, c.Violations)
		}
	}
	tasks, err := TaskGen{Distractors: 2, RedrawForms: true}.Make(SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	task := tasks[3]
	seen := map[string]bool{}
	rng := NewRNG(1)
	for range 200 {
		v := RandomizeNames(task, rng)
		seen[sourceShape(v.Source)] = true
		if op, err := InferOp(v.Source); err != nil || op != task.Op {
			t.Fatalf("InferOp(%q) = %q, %v; want %s", v.Source, op, err, task.Op)
		}
	}
	if len(seen) != len(task.Forms) {
		t.Errorf("200 episodes wrote %d forms of %d", len(seen), len(task.Forms))
	}
	plain := task
	plain.Forms = nil
	a, b := NewRNG(5), NewRNG(5)
	RandomizeNames(plain, a)
	b.Perm(len(namePool))
	if a.Uint64() != b.Uint64() {
		t.Error("RandomizeNames of a task without forms draws other than one permutation of the pool")
	}
	if err := (TaskGen{RedrawForms: true}).Validate(); err == nil {
		t.Error("RedrawForms without distractors: no error")
	}
}
