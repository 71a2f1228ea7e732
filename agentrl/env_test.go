package agentrl

import (
	"math"
	"strings"
	"testing"
)

func mustEnv(t testing.TB, maxTurns, maxEdits int) *EditBudgetEnv {
	t.Helper()
	e, err := NewEditBudgetEnv(maxTurns, nil, maxEdits)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSettingsValidation(t *testing.T) {
	for _, c := range []struct {
		turns, edits int
		want         string
	}{{0, 1, "max turns"}, {-3, 1, "max turns"}, {6, -1, "max edits"}} {
		if _, err := NewEditBudgetEnv(c.turns, nil, c.edits); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewEditBudgetEnv(%d, nil, %d): err = %v, want %q", c.turns, c.edits, err, c.want)
		}
	}
	if _, err := NewEarlyStopEnv(6, nil, 1, 0); err == nil {
		t.Error("max invalid 0: no error")
	}
	if _, err := NewMixedTurnEnv(0, nil, 1); err == nil {
		t.Error("mixed env with 0 turns: no error")
	}
	if _, err := MakeReward("visible", RewardOptions{}); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("unknown reward kind: err = %v", err)
	}
	if _, err := NewEditBudgetEnv(1, nil, 0); err != nil {
		t.Errorf("1 turn, 0 edits: %v", err)
	}
}

// One call on a fresh env (6 turns, 1 edit) for every tool and every error.
func TestStepTable(t *testing.T) {
	task := mustTasks(t, SplitTrain)[0]
	for _, c := range []struct {
		name, action, obs string
		done              bool
		invalid, reads    int
		tests, edits      int
	}{
		{"read", "<call> read </call>", CompactSource(task.Source), false, 0, 1, 0, 0},
		{"test", "<call> test </call>", "passed", false, 0, 0, 1, 0},
		{"edit", "<call> edit fix_init </call>", ObsEdited, false, 0, 0, 0, 1},
		{"submit", "<call> submit </call>", ObsSubmitted, true, 0, 0, 0, 0},
		{"missing argument", "<call> edit </call>", ObsMissingArg, false, 1, 0, 0, 0},
		{"extra argument", "<call> read fix_init </call>", ObsExtraArg, false, 1, 0, 0, 0},
		{"extra edit argument", "<call> edit fix_init fix_init </call>", ObsExtraArg, false, 1, 0, 0, 0},
		{"unknown tool", "<call> run </call>", ObsUnknownTool, false, 1, 0, 0, 0},
		{"unknown op", "<call> edit fix_all </call>", ObsUnknownOp, false, 1, 0, 0, 0},
		{"no call end", "<call> edit fix_init fix_init fix_init fix_init fix_init fix_init", ObsMalformed, false, 1, 0, 0, 0},
		{"no call start", "read </call>", ObsMalformed, false, 1, 0, 0, 0},
		{"empty call", "<call> </call>", ObsMalformed, false, 1, 0, 0, 0},
		{"nested call", "<call> <call> read </call>", ObsMalformed, false, 1, 0, 0, 0},
		{"garbage", "<obs> \n <pad> )", ObsMalformed, false, 1, 0, 0, 0},
		{"empty", "", ObsMalformed, false, 1, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := mustEnv(t, 6, 1)
			if p := env.Reset(task); p != task.Issue {
				t.Fatalf("prompt %q", p)
			}
			obs, reward, done, info := env.Step(c.action)
			if !strings.HasPrefix(obs, c.obs) || done != c.done || env.NInvalid != c.invalid || env.NReads != c.reads ||
				env.NTests != c.tests || env.NEdits != c.edits || env.NTurns != 1 {
				t.Errorf("obs %q done %v invalid %d reads %d tests %d edits %d turns %d", obs, done, env.NInvalid, env.NReads, env.NTests, env.NEdits, env.NTurns)
			}
			if done && (info.NTurns != 1 || !info.Submitted || info.Stop != StopSubmitted || reward != 0) {
				t.Errorf("terminal info %+v reward %v", info, reward)
			}
			if !done && (reward != 0 || info != (Info{})) {
				t.Errorf("non-terminal step returned reward %v info %+v", reward, info)
			}
		})
	}
}

func run(env Env, task Task, actions ...string) (obs []string, reward float64, done bool, info Info) {
	env.Reset(task)
	for _, a := range actions {
		o, r, d, i := env.Step(a)
		obs, reward, done, info = append(obs, o), r, d, i
		if d {
			break
		}
	}
	return
}

// Every stop reason and the budget rules.
func TestStopReasons(t *testing.T) {
	task := mustTasks(t, SplitTrain)[2] // fix_init
	edit := func(op string) string { return CallText(ToolEdit, op) }
	read, test, submit := CallText(ToolRead), CallText(ToolTest), CallText(ToolSubmit)

	// submitted and passing
	_, r, done, info := run(mustEnv(t, 6, 1), task, read, edit(task.Op), test, submit)
	if !done || r != 1 || info != (Info{Submitted: true, HiddenPass: true, NTurns: 4, NReads: 1, NTests: 1, NEdits: 1, Stop: StopSubmitted}) {
		t.Errorf("oracle: reward %v info %+v", r, info)
	}
	// submitted and failing (wrong op)
	_, r, _, info = run(mustEnv(t, 6, 1), task, edit(OpReturn), submit)
	if r != 0 || !info.Submitted || info.HiddenPass || info.Stop != StopSubmitted {
		t.Errorf("wrong op: reward %v info %+v", r, info)
	}
	// out of turns: the third call ends the episode, whatever it is
	obs, r, done, info := run(mustEnv(t, 3, 1), task, read, edit(task.Op), test, submit)
	if !done || len(obs) != 3 || r != 0 || info.Submitted || !info.HiddenPass || info.Stop != StopMaxTurns || info.NTurns != 3 {
		t.Errorf("max turns: obs %q reward %v info %+v", obs, r, info)
	}
	// edits beyond the budget are refused: a turn, not an edit, not invalid
	obs, _, _, info = run(mustEnv(t, 6, 1), task, edit(task.Op), edit(task.Op), submit)
	if obs[1] != ObsNoEdits+" : "+strings.TrimPrefix(obs[0], ObsEdited+" : ") || info.NEdits != 1 || info.NInvalid != 0 || info.NTurns != 3 || !info.HiddenPass {
		t.Errorf("refused edit: obs %q info %+v", obs, info)
	}
	// max edits 0 refuses every edit; a second edit with budget 2 undoes the first
	if _, _, _, info = run(mustEnv(t, 6, 0), task, edit(task.Op), submit); info.NEdits != 0 || info.HiddenPass {
		t.Errorf("max edits 0: info %+v", info)
	}
	if _, _, _, info = run(mustEnv(t, 6, 2), task, edit(task.Op), edit(task.Op), submit); info.NEdits != 2 || info.HiddenPass {
		t.Errorf("double edit: info %+v", info)
	}
	// truncated: the episode stops it from outside
	env := mustEnv(t, 6, 1)
	run(env, task, read)
	if r, info := env.Stop(StopTruncated); r != 0 || info.Stop != StopTruncated || info.Submitted || !env.Done || info.NReads != 1 {
		t.Errorf("stop: reward %v info %+v", r, info)
	}
	if obs, r, done, _ := env.Step(submit); obs != ObsEpisodeOver || r != 0 || !done {
		t.Errorf("step after the end: %q %v %v", obs, r, done)
	}
	// invalid: EarlyStopEnv ends after max_invalid malformed calls
	es, _ := NewEarlyStopEnv(6, nil, 1, 2)
	obs, r, done, info = run(es, task, read, "<call> edit </call>", test, "<call> oops </call>", submit)
	if !done || len(obs) != 4 || r != 0 || info.Stop != StopInvalid || info.NInvalid != 2 || info.Submitted || !es.Done {
		t.Errorf("early stop: obs %q reward %v info %+v", obs, r, info)
	}
	// ... and is transparent for clean episodes
	es, _ = NewEarlyStopEnv(6, nil, 1, 1)
	if _, r, _, info = run(es, task, edit(task.Op), submit); r != 1 || info.Stop != StopSubmitted {
		t.Errorf("early stop, clean episode: reward %v info %+v", r, info)
	}
}

func TestMixedTurnEnv(t *testing.T) {
	task := mustTasks(t, SplitTrain)[2]
	env, _ := NewMixedTurnEnv(6, nil, 1)
	// single-turn: graded after the first call as submitted
	obs, r, done, info := run(env, SingleTurn(task), CallText(ToolEdit, task.Op), CallText(ToolRead))
	if !env.Single || len(obs) != 1 || !done || r != 1 || !info.Submitted || info.NTurns != 1 || info.Stop != StopSubmitted {
		t.Errorf("single-turn: obs %q reward %v info %+v", obs, r, info)
	}
	if _, r, _, info = run(env, SingleTurn(task), CallText(ToolRead)); r != 0 || !info.Submitted || info.HiddenPass {
		t.Errorf("single-turn read: reward %v info %+v", r, info)
	}
	// multi-turn tasks run as usual
	obs, r, _, info = run(env, task, CallText(ToolRead), CallText(ToolEdit, task.Op), CallText(ToolSubmit))
	if env.Single || len(obs) != 3 || r != 1 || info.NTurns != 3 {
		t.Errorf("multi-turn: obs %q reward %v info %+v", obs, r, info)
	}
}

func TestMakeReward(t *testing.T) {
	f, err := MakeReward(RewardHidden, RewardOptions{StepPenalty: 0.05, WrongSubmit: -1, InvalidPenalty: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		info Info
		want float64
	}{
		{Info{Submitted: true, HiddenPass: true, NTurns: 3}, 1 - 0.15},
		{Info{Submitted: true, NTurns: 2, NInvalid: 1}, -1 - 0.1 - 0.5},
		{Info{HiddenPass: true, NTurns: 6}, -0.3},
		{Info{}, 0},
	} {
		if got := f(c.info); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("reward(%+v) = %v, want %v", c.info, got, c.want)
		}
	}
	free, err := MakeReward(RewardHidden, RewardOptions{StepPenalty: 0.3, FreeCalls: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		info Info
		want float64
	}{
		{Info{Submitted: true, HiddenPass: true, NTurns: 3}, 1},   // read, edit, submit: all free
		{Info{Submitted: true, HiddenPass: true, NTurns: 4}, 0.7}, // a fourth call is charged
		{Info{NTurns: 6}, -0.9},
		{Info{Submitted: true, NTurns: 1}, 0},
	} {
		if got := free(c.info); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("reward with 3 free calls(%+v) = %v, want %v", c.info, got, c.want)
		}
	}
	// Section 12.7's fix for the agent that never submits: running out of turns scores like a failed submission.
	fix, err := MakeReward(RewardHidden, RewardOptions{WrongSubmit: -1, Unsubmitted: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		info Info
		want float64
	}{
		{Info{Submitted: true, HiddenPass: true, NTurns: 4, Stop: StopSubmitted}, 1},
		{Info{Submitted: true, NTurns: 4, Stop: StopSubmitted}, -1},
		{Info{NTurns: 6, Stop: StopMaxTurns}, -1},
		{Info{HiddenPass: true, NTurns: 6, Stop: StopMaxTurns}, -1}, // a correct source left unsubmitted earns nothing
		{Info{NTurns: 20, Stop: StopTruncated}, -1},
	} {
		if got := fix(c.info); got != c.want {
			t.Errorf("reward with unsubmitted -1(%+v) = %v, want %v", c.info, got, c.want)
		}
	}
	if _, err := MakeReward(RewardHidden, RewardOptions{FreeCalls: -1}); err == nil {
		t.Error("negative FreeCalls accepted")
	}
	plain, _ := MakeReward(RewardHidden, RewardOptions{})
	for _, i := range []Info{{Submitted: true, HiddenPass: true}, {Submitted: true}, {HiddenPass: true}} {
		if plain(i) != HiddenReward(i) {
			t.Errorf("plain reward differs from HiddenReward on %+v", i)
		}
	}
}

func TestLoggedEnvAndLogByStep(t *testing.T) {
	task := mustTasks(t, SplitTrain)[0]
	var log []Info
	for i := range 5 {
		env := LoggedEnv{Env: mustEnv(t, 6, 1), Log: &log}
		if i == 4 {
			env.Reset(task)
			env.Stop(StopTruncated)
			continue
		}
		run(env, task, make([]string, i+1)...) // i+1 malformed calls, then the episode continues unfinished
		run(env, task, CallText(ToolSubmit))
	}
	if len(log) != 5 || log[2].Stop != StopSubmitted || log[4].Stop != StopTruncated {
		t.Fatalf("log %+v", log)
	}
	history := func(episodes ...int) []StepStats {
		h := make([]StepStats, len(episodes))
		for k, n := range episodes {
			h[k] = StepStats{Step: k, Stats: Stats{Episodes: n}}
		}
		return h
	}
	steps, err := LogByStep(history(2, 3), log)
	if err != nil || len(steps) != 2 || len(steps[0]) != 2 || len(steps[1]) != 3 || steps[1][2].Stop != StopTruncated {
		t.Errorf("LogByStep: %v %v", steps, err)
	}
	for _, bad := range [][]int{{2, 2}, {6}, {-1, 6}, {2, 3, 1}} {
		if _, err := LogByStep(history(bad...), log); err == nil {
			t.Errorf("LogByStep(%v): no error", bad)
		}
	}
	if s := InfoStats(log); s.Episodes != 5 || s.SubmitRate != 0.8 {
		t.Errorf("InfoStats %+v", s)
	}
}

// The gym's observations echo an edit's line (applied or refused) and name a failing test's first failing input.
func TestObservations(t *testing.T) {
	var task Task
	for _, tk := range mustTasks(t, SplitTrain) {
		if tk.Op != OpInit {
			task = tk // an edit with fix_init leaves it failing
			break
		}
	}
	env, err := MakeEnv(DefaultRLConfig())
	if err != nil {
		t.Fatal(err)
	}
	env.Reset(task)
	var obs [3]string
	for i, action := range []string{"<call> edit fix_init </call>", "<call> edit fix_init </call>", "<call> test </call>"} {
		obs[i], _, _, _ = env.Step(action)
	}
	if !strings.HasPrefix(obs[0], ObsEdited+" : ") || !strings.HasPrefix(obs[1], ObsNoEdits+" : ") ||
		!strings.Contains(obs[2], failedOn) || !testFailed(obs[2]) {
		t.Errorf("observations %q, want the edited line after %q and %q, and the failing input", obs, ObsEdited, ObsNoEdits)
	}
	for _, obs := range []string{"passed 3 of 3", "error op failed", "passed"} {
		if testFailed(obs) {
			t.Errorf("testFailed(%q) = true", obs)
		}
	}
}
