package codekey_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/codekey"
)

// cellProgram is a notebook cell program as GoNB assembles it: run and the literal in main are what a key holds.
const cellProgram = `package main

import (
	"fmt"
	"sort"

	"github.com/agentrl-go/agentrl/agentrl"
)

type cfg struct {
	Scale   float64
	Weights []float64
}

func (c cfg) scaled() float64 { return c.Scale * 2 }

func (c *cfg) set(x float64) { c.Scale = x }

func (c cfg) reset() { c.Weights[0] = 0 }

var weights = []float64{1, 2, 3}

var settings = cfg{Scale: 1}

var table = map[string]float64{"a": 1}

func show(w []float64) { fmt.Println(w[0], len(w)) }

func scale(w []float64) { w[0] *= 2 }

func run() float64 { return weights[0] + settings.scaled() + table["a"] }

func main() {
	est := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) {
		return agentrl.BroadcastAdvantages(agentrl.ComputeAdvantages(s.Batch.Rewards, s.Cfg.GroupSize), s.Batch.Mask()), nil
	})
	neg := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) {
		adv := agentrl.ComputeAdvantages(s.Batch.Rewards, s.Cfg.GroupSize)
		for i := range adv {
			adv[i] = -adv[i]
		}
		return agentrl.BroadcastAdvantages(adv, s.Batch.Mask()), nil
	})
	fmt.Println(run(), est != nil, neg != nil)
	//EDIT
}
`

// literal names the runtime gives main's two literals, and the lines they start at.
const (
	estName, estLine = "main.main.func1", 34
	negName, negLine = "main.main.func2", 37
)

// TestMutations is the mutation suite of the keys: each edit a reader can make to a cell program either changes the
// key of the code it affects or is refused, never keeps an old key for another computation.
func TestMutations(t *testing.T) {
	ref, err := codekey.SourceHash([]byte(cellProgram), "run")
	if err != nil {
		t.Fatal(err)
	}
	refEst, err := codekey.FuncHash([]byte(cellProgram), estName, estLine)
	if err != nil {
		t.Fatal(err)
	}
	refNeg, err := codekey.FuncHash([]byte(cellProgram), negName, negLine)
	if err != nil {
		t.Fatal(err)
	}
	if refEst == refNeg {
		t.Fatal("two literals in one function: one key")
	}
	edit := func(old, new string) []byte {
		if !strings.Contains(cellProgram, old) {
			t.Fatalf("%q is not in the program", old)
		}
		return []byte(strings.Replace(cellProgram, old, new, 1))
	}
	// Uses of the package variables that run reads: each may change what run computes, so run is refused.
	for _, tc := range []struct{ name, old, new, want string }{
		{"an element written", "//EDIT", "weights[0] = 5", "weights (line 45: assigned)"},
		{"a map written", "//EDIT", `table["a"] = 2`, "table (line 45: assigned)"},
		{"a field written", "//EDIT", "settings.Scale = 2", "settings (line 45: assigned)"},
		{"a field incremented", "//EDIT", "settings.Scale++", "assigned"},
		{"a whole assignment", "//EDIT", "weights, _ = []float64{9}, 0", "assigned"},
		{"a range clause", "//EDIT", "var i int\n\tfor i, weights[0] = range []float64{7} {\n\t}\n\t_ = i", "assigned by a range clause"},
		{"copy", "//EDIT", "copy(weights, []float64{4})", "given to copy"},
		{"append", "//EDIT", "weights = append(weights[:0], 4)", "weights (line 45"},
		{"append into its array", "//EDIT", "_ = append(weights[:1], 4)", "given to append"},
		{"delete", "//EDIT", `delete(table, "a")`, "given to delete"},
		{"clear", "//EDIT", "clear(table)", "given to clear"},
		{"a pointer", "//EDIT", "p := &weights\n\t(*p)[0] = 4", "its address taken"},
		{"a pointer to a field", "//EDIT", "p := &settings.Scale\n\t*p = 4", "its address taken"},
		{"a pointer-receiver method", "//EDIT", "settings.set(4)", "its pointer-receiver method set called"},
		{"a value-receiver method that writes through its receiver", "//EDIT", "settings.reset()", "its method reset called"},
		{"a standard library function that sorts", "//EDIT", "sort.Float64s(weights)", "given to sort.Float64s"},
		{"a cell's function that writes its parameter", "//EDIT", "scale(weights)", "given to scale, where it is assigned"},
		{"an init function", "func run()", "func init() { weights[1] = 0 }\n\nfunc run()", "assigned"},
		{"another variable's initializer", "func run()", "var _ = func() int { settings.Scale = 4; return 0 }()\n\nfunc run()", "assigned"},
		{"a pointer in an initializer", "func run()", "var alias = &table\n\nfunc run()", "its address taken"},
		{"run itself counting", "return weights[0]", "table[\"n\"]++\n\treturn weights[0]", "assigned"},
		{"a bound pointer method", "//EDIT", "f := settings.set\n\tf(4)", "its pointer-receiver method set bound"},
	} {
		_, err := codekey.SourceHash(edit(tc.old, tc.new), "run")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// Another name for the value: a write through it changes what run reads, which its key cannot hold (Open).
	for _, tc := range []struct{ name, old, new, want string }{
		{"an alias written", "//EDIT", "l := weights\n\tl[0] = 0.3", "l, another name for it, at line 46: assigned"},
		{"a map alias written", "//EDIT", "m := table\n\tm[\"a\"] = 0.3", "m, another name for it"},
		{"a slice of it written", "//EDIT", "l := weights[1:]\n\tl[0] = 0.3", "another name for it"},
		{"an alias of an alias", "//EDIT", "l := weights\n\tk := l\n\tk[0] = 0.3", "another name for it"},
		{"an alias assigned later", "//EDIT", "var l []float64\n\tl = weights\n\tl[0] = 0.3", "another name for it"},
		{"a range value written", "//EDIT", "for _, w := range [][]float64{weights} {\n\t\tw[0] = 1\n\t}", "another name for it"},
		{"a struct holding it written", "//EDIT", "c := cfg{Weights: weights}\n\tc.Weights[0] = 1", "another name for it"},
		{"a pointer to a struct holding it", "//EDIT", "p := &cfg{Weights: weights}\n\tp.Weights[0] = 1", "another name for it"},
		{"a converted alias", "//EDIT", "l := []float64(weights)\n\tl[0] = 1", "another name for it"},
		{"stored in a map", "//EDIT", "all := map[int][]float64{}\n\tall[0] = weights", "stored in another value"},
		{"a package-level alias", "func run()", "var shared = weights\n\nfunc init() { shared[0] = 9 }\n\nfunc run()", "shared, another name for it"},
		{"returned and written", "func run()", "func get() []float64 { return weights }\n\nfunc run()", "returned by get"},
	} {
		src := edit(tc.old, tc.new)
		if tc.name == "returned and written" {
			src = []byte(strings.Replace(string(src), "//EDIT", "get()[0] = 1", 1))
		}
		open, err := codekey.OpensOf(src, "run")
		if err != nil || !strings.Contains(strings.Join(open, "; "), tc.want) {
			t.Errorf("%s: open %q, %v; want it to name %q", tc.name, open, err, tc.want)
		}
		if _, err := codekey.SourceHash(src, "run"); err != nil {
			t.Errorf("%s: refused (%v): a write through another name is verified, not refused", tc.name, err)
		}
	}
	// Reads, and edits the keys of run and of the literals do not hold: the same hashes.
	for _, tc := range []struct{ name, old, new string }{
		{"printed", "//EDIT", `fmt.Println(weights, len(weights), settings.scaled(), table["a"])`},
		{"given to a cell's function that reads", "//EDIT", "show(weights)"},
		{"given to the library", "//EDIT", "_ = agentrl.BroadcastAdvantages(nil, nil)\n\t_ = agentrl.NewRNG(uint64(len(weights)))"},
		{"copied and the copy changed", "//EDIT", "x := weights[0]\n\tx = 3\n\t_ = x"},
		{"appended elsewhere", "//EDIT", "var all []float64\n\tall = append(all, weights...)\n\t_ = all"},
		{"copied from", "//EDIT", "dst := make([]float64, 3)\n\tcopy(dst, weights)"},
		{"a value method bound", "//EDIT", "f := settings.scaled\n\t_ = f"},
		{"an alias read", "//EDIT", "l := weights\n\t_ = l[0]"},
		{"a range value read", "//EDIT", "for _, w := range weights {\n\t\t_ = w\n\t}"},
		{"a struct holding it given to the library", "//EDIT", "_ = agentrl.GRPO{Cfg: agentrl.DefaultRLConfig()}\n\t_ = cfg{Weights: weights}.scaled()"},
	} {
		src := edit(tc.old, tc.new)
		if h, err := codekey.SourceHash(src, "run"); err != nil || h != ref {
			t.Errorf("%s: %v, changed %v: want the same hash", tc.name, err, h != ref)
		}
		if open, _ := codekey.OpensOf(src, "run"); len(open) > 0 {
			t.Errorf("%s: open %q, want none", tc.name, open)
		}
	}
	// The literals: each keyed by its own code.
	for _, tc := range []struct {
		name, old, new string
		lit            string // "est" or "neg": the literal whose key is checked
		line           int
		want           string // the refusal, or "" when the hash must change
		same           bool   // the hash must stay
	}{
		{"the negation removed", "adv[i] = -adv[i]", "adv[i] = adv[i]", "neg", negLine, "", false},
		{"the other literal edited", "adv[i] = -adv[i]", "adv[i] = 2 * adv[i]", "est", estLine, "", true},
		{"the function around edited", "fmt.Println(run(), est != nil, neg != nil)", "fmt.Println(est != nil)", "est", estLine, "", true},
		{"a local of its own", "adv := agentrl.ComputeAdvantages", "sign := float32(-1)\n\t\t_ = sign\n\t\tadv := agentrl.ComputeAdvantages", "neg", negLine, "", false},
		{"a loop variable", "\test := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) {\n\t\treturn",
			"\tfor _, sign := range []float32{1, -1} {\n\t\t_ = agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) { _ = sign; return nil, nil })\n\t}\n\test := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) {\n\t\treturn",
			"est", estLine + 1, "captures sign", false},
		{"a local of main", "\test := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) {\n\t\treturn agentrl.BroadcastAdvantages(",
			"\tscale := float32(2)\n\test := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) {\n\t\t_ = scale\n\t\treturn agentrl.BroadcastAdvantages(",
			"est", estLine + 1, "captures scale", false},
		{"two literals on one line", "\test := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) {\n\t\treturn",
			"\test := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) { _ = func() {}\n\t\treturn",
			"est", estLine, "2 function literals start", false},
		{"a package variable the cell changes", "adv := agentrl.ComputeAdvantages", "_ = weights[0]\n\t\tadv := agentrl.ComputeAdvantages", "neg", negLine, "", false},
	} {
		src := edit(tc.old, tc.new)
		name, ref := estName, refEst
		if tc.lit == "neg" {
			name, ref = negName, refNeg
		}
		h, err := codekey.FuncHash(src, name, tc.line)
		switch {
		case tc.want != "":
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.same && h != ref:
			t.Errorf("%s: the literal's hash changed", tc.name)
		case !tc.same && h == ref:
			t.Errorf("%s: the literal's hash did not change", tc.name)
		}
	}
	// A literal reading a package variable that the cell changes is refused.
	src := edit("adv := agentrl.ComputeAdvantages", "_ = weights[0]\n\t\tadv := agentrl.ComputeAdvantages")
	src = []byte(strings.Replace(string(src), "//EDIT", "weights[0] = 2", 1))
	if _, err := codekey.FuncHash(src, negName, negLine); err == nil || !strings.Contains(err.Error(), "weights") {
		t.Errorf("a literal reading a variable the cell writes: %v, want an error naming weights", err)
	}
}

// sign is a struct whose method returns a literal capturing its receiver: a closure over a struct's field.
type sign struct{ S float32 }

func (s sign) estimator() agentrl.AdvantageFunc {
	return func(agentrl.StepBatch) ([][]float32, error) { _ = s.S; return nil, nil }
}

// TestOfLiterals checks, on functions this process runs, that literals are keyed by their own code and that what
// they capture is refused.
func TestOfLiterals(t *testing.T) {
	plus := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) { return nil, nil })
	minus := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) { return [][]float32{}, nil })
	if of(t, plus) == of(t, minus) {
		t.Error("two literals in one function: one key")
	}
	for _, sg := range []float32{1, -1} {
		f := agentrl.AdvantageFunc(func(agentrl.StepBatch) ([][]float32, error) { _ = sg; return nil, nil })
		if _, err := codekey.Of(f); err == nil || !strings.Contains(err.Error(), "captures sg") {
			t.Errorf("a literal capturing a loop variable: %v", err)
		}
	}
	if _, err := codekey.Of(sign{-1}.estimator()); err == nil || !strings.Contains(err.Error(), "captures s") {
		t.Errorf("a literal capturing its method's receiver: %v", err)
	}
	k, err := codekey.KeyOf("x", plus, &engine{"test"})
	if err != nil || len(k.Outside) != 1 || !strings.Contains(k.Outside[0], "function literal") {
		t.Errorf("KeyOf(a literal).Outside = %q, %v: want the literal", k.Outside, err)
	}
	if k, err := codekey.KeyOf("x", agentrl.AdvantageFunc(agentrl.GroupAdvantages), agentrl.EarlyStop{}, &engine{"test"}); err != nil || k.Outside != nil {
		t.Errorf("KeyOf(the library's code).Outside = %q, %v: want none", k.Outside, err)
	}
}

// TestOpens checks what cell code reads that no key can hold: the world outside its values (an environment
// variable, a file, the clock, the process's random source), not the standard library's computations.
func TestOpens(t *testing.T) {
	const program = `package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/agentrl"
)

func helper() string { return os.Getenv("X") }

func run() string {
	//EDIT
	return fmt.Sprint(strings.Repeat("a", 2), filepath.Join("a", "b"), agentrl.NewRNG(1), rand.New(rand.NewPCG(1, 2)).IntN(3))
}

func main() { fmt.Fprintln(os.Stderr, time.Second) }
`
	for _, tc := range []struct{ edit, want string }{
		{"", ""},
		{"_ = os.Getenv(\"X\")", "os.Getenv"},
		{"_, _ = os.ReadFile(\"f\")", "os.ReadFile"},
		{"_ = time.Now()", "time.Now"},
		{"_ = rand.IntN(3)", "math/rand/v2.IntN"},
		{"_, _ = filepath.Glob(\"*\")", "path/filepath.Glob"},
		{"_ = helper()", "os.Getenv"},
		{"fmt.Fprintln(os.Stdout, time.Second)", ""},
		{"flag.Parse()", ""},
		{"_ = flag.Args()", "flag.Args"},
	} {
		got, err := codekey.OpensOf([]byte(strings.Replace(program, "//EDIT", tc.edit, 1)), "run")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q: open %q, want %q", tc.edit, got, tc.want)
		}
	}
}

// TestCopies checks that a copy of a variable whose type holds no references (a struct of numbers, the library's
// configuration) is not another name for it, while a copy of one that holds a slice is.
func TestCopies(t *testing.T) {
	const program = `package main

import "github.com/agentrl-go/agentrl/agentrl"

type point struct {
	X, Y float64
	N    [2]int
}

type bag struct{ W []float64 }

var origin = point{X: 1}

var conf = agentrl.DefaultRLConfig()

var tuned = func() agentrl.RLConfig { c := agentrl.DefaultRLConfig(); c.MaxTurns = 3; return c }()

var held = bag{W: []float64{1}}

func adjust(c agentrl.RLConfig) agentrl.RLConfig { c.LR = 1; return c }

func run() float64 { return origin.X + conf.LR + tuned.LR + held.W[0] }

func main() {
	//EDIT
}
`
	for _, tc := range []struct{ edit, want string }{
		{"p := origin\n\tp.X = 5\n\tp.N[0] = 1", ""},
		{"c := conf\n\tc.MaxTurns = 3\n\tc.Reward.StepPenalty = 1", ""},
		{"c := tuned\n\tc.Seed = 2", ""},
		{"_ = adjust(conf)", ""},
		{"_ = []agentrl.RLConfig{conf, tuned}", ""},
		{"b := held\n\tb.W[0] = 2", "held"},
	} {
		open, err := codekey.OpensOf([]byte(strings.Replace(program, "//EDIT", tc.edit, 1)), "run")
		if err != nil || strings.Join(open, " ") != tc.want && !strings.HasPrefix(strings.Join(open, " "), tc.want+" ") {
			t.Errorf("%q: open %q, %v; want %q", tc.edit, open, err, tc.want)
		}
	}
	if _, err := codekey.SourceHash([]byte(strings.Replace(program, "//EDIT", "conf.LR = 2", 1)), "run"); err == nil {
		t.Error("a direct write of a copied-from variable: not refused")
	}
}

// TestProgram checks what the key of a result that no first step verifies holds of the program around it: the code
// that runs from main, init and the package variables, and everything it reaches, but not a declaration nothing
// runs, a comment, or another cell's body.
func TestProgram(t *testing.T) {
	// main begins as GoNB writes every cell's: flag.Parse(), then the cell's body.
	const program = `package main

import (
	"flag"
	"os"

	"github.com/agentrl-go/agentrl/agentrl"
)

var rows = []float32{1, 2, 3, 4}

func report() float32 { return rows[0] }

func main() {
	flag.Parse()
	//EDIT
	_ = report()
}
`
	ref, open, err := codekey.ProgramOf([]byte(program))
	if err != nil || len(open) > 0 {
		t.Fatal(err, open)
	}
	for _, tc := range []struct {
		edit string
		same bool
		open string
	}{
		{"// a comment", true, ""},
		{"agentrl.Rows(rows, 2)[0][0] = 9", false, ""},
		{"_ = os.Getenv(\"X\")", false, "os.Getenv"},
	} {
		got, open, err := codekey.ProgramOf([]byte(strings.Replace(program, "//EDIT", tc.edit, 1)))
		if err != nil || (got == ref) != tc.same || strings.Join(open, " ") != tc.open {
			t.Errorf("%q: changed %v, open %q, %v; want changed %v, open %q", tc.edit, got != ref, open, err, !tc.same, tc.open)
		}
	}
	unreached := strings.Replace(program, "func main()", "func helper() { rows[1] = 5 }\n\nfunc main()", 1)
	if got, _, _ := codekey.ProgramOf([]byte(unreached)); got != ref {
		t.Error("a function nothing runs changed the program's key")
	}
}

// engine stands for an engine a result is computed on: a Numerical value.
type engine struct{ numerics string }

func (e *engine) NumericsKey() string { return e.numerics }

// TestNumericsFromValues: a key holds the numerics of the Numerical values among its parts and nothing else of
// them, two numerics make two keys, and a key whose code reaches a package that declares its results depend on
// numerics (gomlxmodel, through agentrl) is refused when no part says which.
func TestNumericsFromValues(t *testing.T) {
	f := agentrl.AdvantageFunc(agentrl.GroupAdvantages)
	if _, err := codekey.KeyOf("x", f); err == nil || !strings.Contains(err.Error(), "no part says which") {
		t.Errorf("a key reaching gomlxmodel with no engine: %v, want refused", err)
	}
	a, err := codekey.KeyOf("x", f, &engine{"xla/cpu=a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := codekey.KeyOf("x", f, &engine{"xla/cpu=b"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Numerics != "xla/cpu=a" || a.Key == b.Key {
		t.Errorf("numerics %q, keys %s and %s: want the engine's numerics, and two keys", a.Numerics, a.Key, b.Key)
	}
	two, err := codekey.KeyOf("x", f, &engine{"b"}, []any{&engine{"a"}, &engine{"b"}})
	if err != nil || two.Numerics != "a | b" {
		t.Errorf("engines inside a part: numerics %q, %v; want both, sorted, once each", two.Numerics, err)
	}
	if _, err := codekey.KeyOf("x", 3); err != nil {
		t.Errorf("a key whose code reaches no such package needs no engine: %v", err)
	}
}

// scaler is a schedule a test's value holds through an interface; its one method is unexported.
type scaler interface{ scale(step int) float32 }

// flatScale's only method is unexported, so the runtime lists none.
type flatScale struct{}

func (flatScale) scale(step int) float32 { return 1 }

// scheduled holds a scaler, as a reader's estimator holds a schedule.
type scheduled struct{ S scaler }

// TestUnexportedMethodsKeyed: a type of the calling code whose methods are all unexported is keyed by its code
// (its declaration and its methods), found from the call stack: an edit of such a method, reached only through an
// interface, changes the key.
func TestUnexportedMethodsKeyed(t *testing.T) {
	k, err := codekey.KeyOf("x", scheduled{S: flatScale{}}, &engine{"test"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(k.Outside, func(o string) bool { return strings.Contains(o, "flatScale") }) {
		t.Errorf("Outside = %q: want flatScale, whose code the key must hold", k.Outside)
	}
}
