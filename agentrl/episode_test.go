package agentrl

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// policy is a scripted policy: it returns the next call's text given the episode so far.
type policy func(e *Episode, rng *rand.Rand) string

// oracle reads, edits with the inferred op and submits.
func oracle(e *Episode, _ *rand.Rand) string {
	switch len(e.Actions) {
	case 0:
		return CallText(ToolRead)
	case 1:
		op, err := InferOp(e.LastObs())
		if err != nil {
			return CallText(ToolEdit) // malformed: the test notices the failure
		}
		return CallText(ToolEdit, op)
	}
	return CallText(ToolSubmit)
}

// blind edits with a random op, tests and submits, without reading.
func blind(e *Episode, rng *rand.Rand) string {
	switch len(e.Actions) {
	case 0:
		return CallText(ToolEdit, repairOps[rng.IntN(len(repairOps))])
	case 1:
		return CallText(ToolTest)
	}
	return CallText(ToolSubmit)
}

// staller reads once and then tests until something stops it.
func staller(e *Episode, _ *rand.Rand) string {
	if len(e.Actions) == 0 {
		return CallText(ToolRead)
	}
	return CallText(ToolTest)
}

func playEpisode(env Env, task Task, tok *Tokenizer, maxTurns int, p policy, rng *rand.Rand) *Episode {
	e := NewEpisode(env, task, tok, maxTurns, ContextLen)
	for !e.Done {
		call := tok.Encode(p(e, rng))
		logp := make([]float32, len(call))
		for i := range logp {
			logp[i] = -0.5
		}
		e.Act(call, logp)
	}
	return e
}

func playAll(t testing.TB, tasks []Task, maxTurns int, p policy, seed uint64) []Trajectory {
	tok, rng := gymTok(t), NewRNG(seed)
	var trajs []Trajectory
	for _, task := range tasks {
		env := mustEnv(t, maxTurns, 1)
		trajs = append(trajs, MakeTrajectory(playEpisode(env, RandomizeNames(task, rng), tok, maxTurns, p, rng)))
	}
	return trajs
}

func TestOraclePassesEveryTask(t *testing.T) {
	trajs := playAll(t, mustTasks(t, SplitAll), 6, oracle, 0)
	for i, tr := range trajs {
		if !tr.Info.Solved() || tr.Reward != 1 || tr.Info.NTurns != 3 {
			t.Errorf("task %d: reward %v info %+v", i, tr.Reward, tr.Info)
		}
	}
	if s := BehaviorStats(trajs); s.PassRate != 1 || s.Reads != 1 || s.Edits != 1 || s.Turns != 3 || s.SubmitRate != 1 || s.Reward != 1 {
		t.Errorf("oracle stats %+v", s)
	}
}

// The token layout of an episode and the alignment of its trajectory.
func TestEpisodeLayout(t *testing.T) {
	tok := gymTok(t)
	task := mustTasks(t, SplitTrain)[0]
	e := playEpisode(mustEnv(t, 6, 1), task, tok, 6, oracle, nil)
	prompt := len(tok.Encode(task.Issue))
	read := len(tok.Encode(CompactSource(task.Source)))
	want := []Owner{OwnerTemplate}
	for range prompt {
		want = append(want, OwnerPrompt)
	}
	want = append(want, OwnerPolicy, OwnerPolicy, OwnerPolicy, OwnerTemplate)
	for range read {
		want = append(want, OwnerTool)
	}
	fixed, _ := ApplyOp(task.Source, task.Op)
	want = append(want, OwnerTemplate, OwnerPolicy, OwnerPolicy, OwnerPolicy, OwnerPolicy, OwnerTemplate)
	for range tok.Encode(ObsEdited + " : " + changedLine(task.Source, fixed)) {
		want = append(want, OwnerTool)
	}
	want = append(want, OwnerTemplate, OwnerPolicy, OwnerPolicy, OwnerPolicy)
	if !slices.Equal(e.Owner, want) {
		t.Fatalf("owners\n%v\nwant\n%v", e.Owner, want)
	}
	if len(e.IDs) != len(e.Turn) || len(e.IDs) != len(e.Logp) || len(e.Actions) != 3 {
		t.Fatalf("lengths %d %d %d, %d actions", len(e.IDs), len(e.Turn), len(e.Logp), len(e.Actions))
	}
	for i, o := range e.Owner {
		if (o == OwnerPolicy) != (e.Logp[i] != 0) {
			t.Errorf("token %d (%s) has log-prob %v", i, o, e.Logp[i])
		}
	}
	// turns: prompt 0, then each call and its observation carry the call's index
	if e.Turn[prompt] != 0 || e.Turn[prompt+1] != 0 || e.Turn[len(e.Turn)-1] != 2 || e.Turn[len(e.Turn)-4] != 1 {
		t.Errorf("turns %v", e.Turn)
	}
	tr := MakeTrajectory(e)
	if len(tr.ActionMask) != len(tr.IDs)-1 || len(tr.Logp) != len(tr.IDs)-1 {
		t.Fatalf("trajectory lengths %d %d %d", len(tr.IDs), len(tr.ActionMask), len(tr.Logp))
	}
	for j := range tr.ActionMask {
		if (tr.ActionMask[j] == 1) != (tr.Owner[j+1] == OwnerPolicy) || tr.Logp[j] != e.Logp[j+1] {
			t.Errorf("position %d: mask %v owner %s logp %v", j, tr.ActionMask[j], tr.Owner[j+1], tr.Logp[j])
		}
	}
	// acting on a finished episode does nothing
	n := len(e.IDs)
	e.Act(tok.EncodeCall(ToolRead), nil)
	if len(e.IDs) != n || len(e.Actions) != 3 {
		t.Error("Act after the end changed the episode")
	}
}

// A long episode stops when the next call would not fit, and never exceeds the context.
func TestEpisodeTruncation(t *testing.T) {
	tok := gymTok(t)
	for _, task := range mustTasks(t, SplitAll) {
		e := playEpisode(mustEnv(t, 60, 1), task, tok, 60, staller, nil)
		if e.Info.Stop != StopTruncated || e.Info.Submitted || e.Reward != 0 || len(e.IDs) > ContextLen {
			t.Fatalf("%s: stop %q, %d tokens, %d calls", task.Name, e.Info.Stop, len(e.IDs), len(e.Actions))
		}
		if len(e.IDs) < ContextLen-3*MaxCallTokens { // the last observation that fitted, and the call after it

			t.Errorf("%s: truncated at %d tokens", task.Name, len(e.IDs))
		}
	}
	// The Episode's safety cap ends an episode when the env allows more turns.
	e := playEpisode(mustEnv(t, 60, 1), mustTasks(t, SplitTrain)[0], tok, 4, staller, nil)
	if e.Info.Stop != StopMaxTurns || len(e.Actions) != 4 || e.Info.NTurns != 4 {
		t.Errorf("cap: stop %q, %d calls, info %+v", e.Info.Stop, len(e.Actions), e.Info)
	}
	// A prompt that leaves no room for a call ends the episode at once.
	long := mustTasks(t, SplitTrain)[0]
	long.Issue = long.Issue + " " + long.Issue
	e = NewEpisode(mustEnv(t, 6, 1), long, tok, 6, 12)
	if !e.Done || e.Info.Stop != StopTruncated {
		t.Errorf("no room: done %v info %+v", e.Done, e.Info)
	}
	// A call that reaches MaxCallTokens without </call> is malformed and costs a turn.
	e = NewEpisode(mustEnv(t, 6, 1), long, tok, 6, ContextLen)
	call := tok.Encode("<call> edit fix_init fix_init fix_init fix_init fix_init fix_init")
	if len(call) != MaxCallTokens {
		t.Fatalf("call of %d tokens", len(call))
	}
	e.Act(call, nil)
	if e.LastObs() != ObsMalformed || e.Done {
		t.Errorf("truncated call: obs %q", e.LastObs())
	}
}

// The 24-turn budget: a long episode of short calls with a read approaches the context.
func TestLongEpisodeBudget(t *testing.T) {
	trajs := playAll(t, mustTasks(t, SplitTrain), 24, staller, 1)
	longest, truncated := 0, 0
	for _, tr := range trajs {
		longest = max(longest, len(tr.IDs))
		if tr.Info.Stop == StopTruncated {
			truncated++
		}
	}
	t.Logf("24 turns of read + tests: longest %d tokens, %d/%d truncated", longest, truncated, len(trajs))
	if longest < 200 || longest > ContextLen {
		t.Errorf("longest 24-turn episode %d tokens", longest)
	}
}

// TestTokenStats measures the calibration numbers of the issue (run with -v to see them).
func TestTokenStats(t *testing.T) {
	tasks := mustTasks(t, SplitTrain)
	for _, c := range []struct {
		name string
		p    policy
	}{{"oracle", oracle}, {"blind", blind}} {
		trajs := playAll(t, tasks, 6, c.p, 2)
		count := map[Owner]float64{}
		var obs, calls, ids float64
		for _, tr := range trajs {
			for _, o := range tr.Owner[1:] {
				count[o]++
			}
			ids += float64(len(tr.IDs))
			calls += float64(tr.Info.NTurns)
			obs += float64(tr.Info.NTurns - 1) // the last call (submit) has no observation
		}
		n := float64(len(trajs))
		msg := fmt.Sprintf("%-6s tokens/episode %.1f | prompt/episode %.1f | template/obs %.2f | policy/call %.2f | tool/episode %.1f | policy share %.2f",
			c.name, ids/n, count[OwnerPrompt]/n, count[OwnerTemplate]/obs, count[OwnerPolicy]/calls, count[OwnerTool]/n,
			count[OwnerPolicy]/(ids-n))
		t.Log(msg)
		if count[OwnerPrompt]/n != 6 || count[OwnerTemplate]/obs != 2 {
			t.Errorf("%s", msg)
		}
	}
	tok := gymTok(t)
	lo, hi := 1000, 0
	for _, task := range mustTasks(t, SplitAll) {
		n := len(tok.Encode(CompactSource(task.Source)))
		lo, hi = min(lo, n), max(hi, n)
	}
	t.Logf("read observation %d..%d tokens", lo, hi)
	if lo < 25 || hi > 40 {
		t.Errorf("read observation %d..%d tokens, want 25..40", lo, hi)
	}
}

func TestContextView(t *testing.T) {
	tok := gymTok(t)
	e := NewEpisode(mustEnv(t, 10, 1), mustTasks(t, SplitTrain)[0], tok, 10, ContextLen)
	for range 5 {
		e.Act(tok.Encode(staller(e, nil)), nil)
	}
	full := ContextView(e.IDs, e.Owner, e.Turn, len(e.Actions), -1)
	if !slices.Equal(full, e.IDs) {
		t.Fatal("keepObs < 0 is not the full context")
	}
	full[0] = -7
	if e.IDs[0] == -7 {
		t.Fatal("ContextView shares memory with ids")
	}
	k := len(e.Actions)
	for keep := 0; keep <= k+1; keep++ {
		view := ContextView(e.IDs, e.Owner, e.Turn, k, keep)
		want := []int32{}
		for i, id := range e.IDs {
			if e.Owner[i] != OwnerTool || int(e.Turn[i]) >= k-keep {
				want = append(want, id)
			}
		}
		if !slices.Equal(view, want) {
			t.Errorf("keep %d: view differs", keep)
		}
		// the <obs> </obs> placeholders stay
		obs := 0
		for _, id := range view {
			if id == tok.ObsStartID {
				obs++
			}
		}
		if obs != k {
			t.Errorf("keep %d: %d placeholders, want %d", keep, obs, k)
		}
	}
}
