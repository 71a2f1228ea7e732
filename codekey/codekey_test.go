package codekey_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

type estimator struct {
	Scheme string
	Lambda float64
	inner  *estimator
}

func (e estimator) Advantages(agentrl.StepBatch) ([][]float32, error) { return nil, nil }

type otherEstimator struct {
	Scheme string
	Lambda float64
	inner  *estimator
}

func (e otherEstimator) Advantages(agentrl.StepBatch) ([][]float32, error) { return nil, nil }

func topLevel(agentrl.StepBatch) ([][]float32, error) { return nil, nil }

// GroupAdvantages is a copy of the library's, as a notebook shows its #@save code: it keys as the library's.
func GroupAdvantages(s agentrl.StepBatch) ([][]float32, error) {
	return agentrl.BroadcastAdvantages(agentrl.ComputeAdvantages(s.Batch.Rewards, s.Cfg.GroupSize), s.Batch.Mask()), nil
}

// EarlyStop is a copy of the library's type and method.
type EarlyStop struct {
	Cfg        agentrl.RLConfig
	MaxInvalid int
}

// NewEnv makes one environment.
func (e EarlyStop) NewEnv() (agentrl.Env, error) {
	if e.MaxInvalid < 1 {
		return nil, fmt.Errorf("early stop env: max invalid %d < 1", e.MaxInvalid)
	}
	env, err := agentrl.MakeEnv(e.Cfg)
	if err != nil {
		return nil, err
	}
	return &agentrl.EarlyStopEnv{EditBudgetEnv: env.(*agentrl.EditBudgetEnv), MaxInvalid: e.MaxInvalid}, nil
}

// factory's literal captures its parameter: the closure it returns cannot be keyed.
func factory(lambda float64) agentrl.AdvantageFunc {
	return func(agentrl.StepBatch) ([][]float32, error) { _ = lambda; return nil, nil }
}

// noParams' literal captures a local: its value is not in the literal's code.
func noParams() agentrl.AdvantageFunc {
	lambda := 0.95
	return func(agentrl.StepBatch) ([][]float32, error) { _ = lambda; return nil, nil }
}

func of(t *testing.T, v any) string {
	t.Helper()
	k, err := codekey.Of(v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestOf checks what tells two values apart and what is refused.
func TestOf(t *testing.T) {
	base := estimator{"token", 0.95, nil}
	same := []struct {
		name string
		a, b any
	}{
		{"equal values", base, estimator{"token", 0.95, nil}},
		{"maps in any order", map[string]int{"a": 1, "b": 2}, map[string]int{"b": 2, "a": 1}},
		{"the same function", agentrl.AdvantageFunc(topLevel), agentrl.AdvantageFunc(topLevel)},
		{"a copy of the library's function", agentrl.AdvantageFunc(GroupAdvantages), agentrl.AdvantageFunc(agentrl.GroupAdvantages)},
		{"a copy of the library's type", EarlyStop{MaxInvalid: 2}, agentrl.EarlyStop{MaxInvalid: 2}},
	}
	for _, tc := range same {
		if of(t, tc.a) != of(t, tc.b) {
			t.Errorf("%s: two keys", tc.name)
		}
	}
	differ := []struct {
		name string
		a, b any
	}{
		{"a field", base, estimator{"turn", 0.95, nil}},
		{"a number", base, estimator{"token", 0.9, nil}},
		{"an unexported field behind a pointer", base, estimator{"token", 0.95, &estimator{Scheme: "x"}}},
		{"the type", base, otherEstimator{"token", 0.95, nil}},
		{"an interface's dynamic type", []agentrl.Advantages{base}, []agentrl.Advantages{otherEstimator{"token", 0.95, nil}}},
		{"a library function", agentrl.AdvantageFunc(agentrl.GroupAdvantages), agentrl.AdvantageFunc(topLevel)},
		{"nil and empty", []int(nil), []int{}},
		{"a library value", agentrl.EarlyStop{MaxInvalid: 1}, agentrl.EarlyStop{MaxInvalid: 2}},
	}
	for _, tc := range differ {
		if of(t, tc.a) == of(t, tc.b) {
			t.Errorf("%s: one key", tc.name)
		}
	}
	eng, err := gomlxmodel.NewEngine(gomlxmodel.EnvOptions())
	if err != nil {
		t.Fatal(err)
	}
	m1, err := gomlxmodel.New(eng, gomlxmodel.DefaultConfig(32), 1)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := gomlxmodel.New(eng, gomlxmodel.DefaultConfig(32), 2)
	if err != nil {
		t.Fatal(err)
	}
	if of(t, m1) == of(t, m2) {
		t.Error("two models of other weights: one key")
	}
	cyclic := &estimator{}
	cyclic.inner = cyclic
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"a closure capturing a parameter", factory(0.9), "captures lambda"},
		{"a closure capturing a local", noParams(), "captures lambda"},
		{"a method value", agentrl.AdvantageFunc(base.Advantages), "method value"},
		{"a channel", make(chan int), "chan"},
		{"a cycle", cyclic, "refers to itself"},
	} {
		if _, err := codekey.Of(tc.v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestSourceHash checks which edits of a program change the hash of what run reaches.
func TestSourceHash(t *testing.T) {
	const program = `package main

type counter struct{ n int }

func (c counter) add(k int) int { return c.n + k*step }

const step = 2

var total = counter{}

// run is the root.
func run() int { n := total.add(helper()); return n }

func helper() int { x := 3; return x }

func unrelated() {}
`
	ref, err := codekey.SourceHash([]byte(program), "run")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new string
		changes        bool
	}{
		{"the root", "return n }", "return n + 0 }", true},
		{"a function it calls", "x := 3", "x := 4", true},
		{"a method of a variable's type", "c.n + k", "c.n - k", true},
		{"a constant a method reads", "const step = 2", "const step = 5", true},
		{"a function it does not reach", "func unrelated() {}", "func unrelated() { helper() }", false},
		{"a comment", "// run is the root.", "// run, edited.", false},
		{"a local's name", "x := 3; return x", "three := 3; return three", false},
		{"a parameter's name", "add(k int) int { return c.n + k", "add(by int) int { return c.n + by", false},
		{"the layout", "{ n := total.add(helper()); return n }", "{\n\tn := total.add(helper())\n\n\treturn n\n}", false},
	} {
		edited := strings.Replace(program, tc.old, tc.new, 1)
		if tc.name == "" {
			continue
		}
		if edited == program {
			t.Fatalf("%s: %q not in the program", tc.name, tc.old)
		}
		h, err := codekey.SourceHash([]byte(edited), "run")
		if err != nil {
			t.Fatal(err)
		}
		if (h != ref) != tc.changes {
			t.Errorf("%s: changed %v, want %v", tc.name, h != ref, tc.changes)
		}
	}
}

// TestLayers checks the layering the keys rest on: this package imports no package of the module (it is given what
// it keys, and finds the code on disk), and the book's library depends on neither the engine nor the notebook
// kernel (it may declare its numerics to this package, a leaf).
func TestLayers(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(out))
	}
	const module = "github.com/agentrl-go/agentrl/"
	for _, dep := range deps(module + "codekey") {
		if strings.HasPrefix(dep, module) && dep != module+"codekey" {
			t.Errorf("codekey depends on %s", dep)
		}
	}
	for _, dep := range deps(module + "agentrl") {
		for _, banned := range []string{"agentrl/store", "agentrl/runs", "agentrl/ch12", "janpfeifer/gonb"} {
			if strings.Contains(dep, banned) {
				t.Errorf("agentrl depends on %s", dep)
			}
		}
	}
}

// TestSourceHashRefusesAssignedGlobals checks that code reading a package variable that a function assigns is
// refused: its value when the run starts is not the one its declaration gives.
func TestSourceHashRefusesAssignedGlobals(t *testing.T) {
	const program = `package main

var tasks = []int{1, 2, 3}

var fixed = 3

func run() int { return len(tasks) + fixed }

func main() { tasks = tasks[:1] }
`
	if _, err := codekey.SourceHash([]byte(program), "run"); err == nil || !strings.Contains(err.Error(), "tasks (line 9: assigned)") {
		t.Errorf("SourceHash of code reading an assigned variable: %v, want an error naming tasks", err)
	}
	for _, edit := range []string{"tasks[0] = 5", "tasks = append(tasks, 4)", "p := &tasks; _ = p"} {
		edited := strings.Replace(program, "tasks = tasks[:1]", edit, 1)
		if _, err := codekey.SourceHash([]byte(edited), "run"); err == nil {
			t.Errorf("%s: no error", edit)
		}
	}
	readOnly := strings.Replace(program, "tasks = tasks[:1]", "_ = len(tasks)", 1)
	if _, err := codekey.SourceHash([]byte(readOnly), "run"); err != nil {
		t.Errorf("code reading variables nobody assigns: %v", err)
	}
}
