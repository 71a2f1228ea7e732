package agentrl_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
)

// A cell program's key input: CodeHash(root) in the program (a notebook's explicit part of a key), or FuncCode
// of the function that starts on the first line holding at (a factory that TrainedRun keys, or a compute function
// that Cached keys).
type keyInput struct{ root, at string }

// cellKey is what the keys of a cell program's result hold of its code: the hash of each input.
func cellKey(t *testing.T, src string, inputs []keyInput) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, in := range inputs {
		var h string
		var err error
		if in.root != "" {
			h, err = agentrl.CodeHashOf(file, in.root)
		} else {
			i := strings.Index(src, in.at)
			if i < 0 {
				t.Fatalf("%q not in the program", in.at)
			}
			h, err = agentrl.FuncCodeAt(file, strings.Count(src[:i], "\n")+1)
		}
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, h)
	}
	return strings.Join(parts, " ")
}

// TestCellCodeKeys edits, in turn, each environment, reward and training step that the chapter's notebooks
// define or show in their cells (the repository's testdata/cells holds a cell program of each notebook: the
// declarations of its cells in one file, as GoNB writes them; the notebooks' TestCellPrograms keeps them current),
// and checks that the key of the result computed from it changes, while an edit of a comment (in a body, a doc
// comment, a trailing comment) or of the layout leaves every key alone.
func TestCellCodeKeys(t *testing.T) {
	programs := []struct {
		file   string
		inputs []keyInput // the key inputs of the program's stored results
		edits  []struct {
			name, old, new string
			changes        bool
		}
	}{
		{"12.5.go", []keyInput{{at: "return func() (agentrl.Env, error) {"}}, []struct {
			name, old, new string
			changes        bool
		}{
			{"the environment's condition", "e.NInvalid < e.MaxInvalid", "e.NInvalid <= e.MaxInvalid", true},
			{"the environment's stop", "info.Stop = agentrl.StopInvalid", "info.Stop = agentrl.StopMaxTurns", true},
			{"the factory's environment", "env, err := agentrl.MakeEnv(cfg)", "env, err := agentrl.MakeEnv(agentrl.DefaultRLConfig())", true},
			{"a doc comment", "// Step delegates, then ends", "// Step hands over, then ends", false},
			{"a comment in a body", "\te.Done = true\n", "\t// the episode ends here\n\te.Done = true\n", false},
			{"a trailing comment", "e.Done = true\n", "e.Done = true // ends it\n", false},
			{"a blank line", "\te.Done = true\n", "\n\te.Done = true\n", false},
			{"code it does not reach", "func malformedPerTurn(", "func malformedPerTurn2(", false},
		}},
		{"12.6.go", []keyInput{{at: "func mixedFactory()"}, {at: "return func(s agentrl.StepBatch) float64"}}, []struct {
			name, old, new string
			changes        bool
		}{
			{"the environment's Reset", `strings.Contains(task.Issue, "\n")`, `strings.Contains(task.Issue, "\t")`, true},
			{"the environment's Step", "if done || !e.Single {", "if done || e.Single {", true},
			{"the environment's grading", "e.FinalInfo(true)", "e.FinalInfo(false)", true},
			{"the factory's configuration", "var mixedCfg = agentrl.DefaultRLConfig()", "var mixedCfg = agentrl.RLConfig{}", true},
			{"the per-format metric's verdict", "t.Info.Submitted && t.Info.HiddenPass {\n\t\t\t\t\tpassed++",
				"t.Info.HiddenPass {\n\t\t\t\t\tpassed++", true},
			{"a doc comment", "// Reset marks a task", "// Reset flags a task", false},
			{"a comment in a body", "\te.Done = true\n", "\t// single-turn: one call\n\te.Done = true\n", false},
			{"a trailing comment", "e.Done = true\n", "e.Done = true // graded\n", false},
		}},
		{"12.2.go", []keyInput{{at: "func WarmCritic("}, {at: "return func(s agentrl.StepBatch) ([][]float32, error) {"}}, []struct {
			name, old, new string
			changes        bool
		}{
			{"the reward's penalty", "rewards[b][j] -= float32(stepPenalty)", "rewards[b][j] -= float32(2*stepPenalty)", true},
			{"the reward's condition", "t.Info.Submitted && t.Info.HiddenPass", "t.Info.HiddenPass", true},
			{"the critic warm-up", "for seed := range 3 {", "for seed := range 4 {", true},
			{"the critic's learning rate", "0, 1e-3); err != nil", "0, 1e-2); err != nil", true},
			{"the advantages", `if scheme == "token" {`, `if scheme != "token" {`, true},
			{"a comment in a body", "\t\tvar adv [][]float32\n", "\t\t// advantages by scheme\n\t\tvar adv [][]float32\n", false},
			{"a doc comment", "// WarmCritic is 12.2's critic warm-up", "// WarmCritic warms the critic", false},
			{"code it does not reach", "func explainedVariance(", "func explainedVariance2(", false},
		}},
		{"12.4.go", []keyInput{{at: "func KeepObs("}, {at: "func ContextStep("}}, []struct {
			name, old, new string
			changes        bool
		}{
			{"the training step's advantages", "episodeAdv[s.Episode]", "-episodeAdv[s.Episode]", true},
			{"the context view", "if keepObs < 0 {", "if keepObs <= 0 {", true},
			{"the sampler's view", "view := viewOf(e.IDs, e.Owner, e.Turn, len(e.Actions))",
				"view := viewOf(e.IDs[1:], e.Owner[1:], e.Turn[1:], len(e.Actions))", true},
			{"a trailing comment", "episodeAdv := agentrl.ComputeAdvantages(rewards, cfg.GroupSize) // [E]",
				"episodeAdv := agentrl.ComputeAdvantages(rewards, cfg.GroupSize) // [E] per episode", false},
			{"a doc comment", "// ContextStep is one step of train_context", "// ContextStep trains one step", false},
			{"code it does not reach", "func TrainContext(", "func TrainContext2(", false},
		}},
		{"12.7.go", []keyInput{{at: "masked := func(s agentrl.StepBatch)"}}, []struct {
			name, old, new string
			changes        bool
		}{
			{"the masked advantages' condition", "if t.Info.Submitted {\n\t\t\t\tn, mean", "if !t.Info.Submitted {\n\t\t\t\tn, mean", true},
			{"the never-submit reward", "cfg.Reward.WrongSubmit = -1", "cfg.Reward.WrongSubmit = -2", true},
			{"a doc comment", "// maskedTruncationAdvantages: group mean", "// maskedTruncationAdvantages: the group mean", false},
			{"a trailing comment", "std := math.Sqrt(ss / max(n-1, 1))", "std := math.Sqrt(ss / max(n-1, 1)) // sample std", false},
			{"code it does not reach", "cfg.Reward.FreeCalls = 3", "cfg.Reward.FreeCalls = 4", false},
		}},
	}
	for _, p := range programs {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "cells", p.file))
		if err != nil {
			t.Fatal(err)
		}
		src := string(data)
		ref := cellKey(t, src, p.inputs)
		for _, e := range p.edits {
			t.Run(p.file+"/"+e.name, func(t *testing.T) {
				if !strings.Contains(src, e.old) {
					t.Fatalf("%q not in %s", e.old, p.file)
				}
				got := cellKey(t, strings.Replace(src, e.old, e.new, 1), p.inputs)
				if (got != ref) != e.changes {
					t.Errorf("key changed: %v, want %v", got != ref, e.changes)
				}
			})
		}
	}
}

const factoryTurns = 3

// testFactory is an environment factory outside the library (this file is a test).
func testFactory() (agentrl.Env, error) {
	cfg := agentrl.DefaultRLConfig()
	cfg.MaxTurns = factoryTurns
	return agentrl.MakeEnv(cfg)
}

// TestFuncCode checks FuncCode on real function values: a function outside the library hashes as CodeHash of
// its declaration, a function literal as CodeHash of the declaration it is written in, the library's own
// functions have no hash (CodeVersion covers them), and what is not a function is an error.
func TestFuncCode(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	literal := func() (agentrl.Env, error) { return testFactory() }
	for _, tt := range []struct {
		name string
		f    any
		root string
	}{
		{"a function", testFactory, "testFactory"},
		{"a function literal", literal, "TestFuncCode"},
		{"a library function", agentrl.MakeEnv, ""},
		{"a library closure", agentrl.EnvFactoryOf(agentrl.DefaultRLConfig()), ""},
	} {
		got, err := agentrl.FuncCode(tt.f)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		want := ""
		if tt.root != "" {
			if want, err = agentrl.CodeHashOf(file, tt.root); err != nil {
				t.Fatal(err)
			}
		}
		if got != want {
			t.Errorf("%s: FuncCode = %q, want %q", tt.name, got, want)
		}
	}
	for _, bad := range []any{nil, 42, agentrl.EnvFactory(nil)} {
		if _, err := agentrl.FuncCode(bad); err == nil {
			t.Errorf("FuncCode(%#v): no error", bad)
		}
	}
}
