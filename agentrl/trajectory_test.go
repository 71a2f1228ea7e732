package agentrl

import (
	"slices"
	"testing"
)

// Collate's action mask equals (owner[1:] == policy) on every position, padding included.
func TestCollateMaskEqualsPolicyOwner(t *testing.T) {
	tasks := mustTasks(t, SplitTrain)[:4]
	var trajs []Trajectory
	for i, p := range []policy{oracle, blind, staller} {
		trajs = append(trajs, playAll(t, tasks, 6+6*i, p, uint64(i))...)
	}
	tok := gymTok(t)
	b := Collate(trajs, tok.PadID)
	T := 0
	for _, tr := range trajs {
		T = max(T, len(tr.IDs))
	}
	if b.B != len(trajs) || b.T != T || len(b.IDs) != b.B*b.T || len(b.ActionMask) != b.B*(T-1) || len(b.Rewards) != b.B {
		t.Fatalf("shapes B %d T %d ids %d mask %d", b.B, b.T, len(b.IDs), len(b.ActionMask))
	}
	owners := make([][]int32, len(trajs))
	for i, tr := range trajs {
		for _, o := range tr.Owner[1:] {
			owners[i] = append(owners[i], int32(o))
		}
	}
	padded := PadRows(owners, T-1, -1)
	for k := range b.ActionMask {
		i, j := k/(T-1), k%(T-1)
		policy := padded[k] == int32(OwnerPolicy)
		if (b.ActionMask[k] == 1) != policy || int32(b.Owner[k]) != padded[k] {
			t.Fatalf("row %d position %d: mask %v owner %d", i, j, b.ActionMask[k], padded[k])
		}
		tr := trajs[i]
		if j+1 < len(tr.IDs) {
			if b.IDs[i*T+j+1] != tr.IDs[j+1] || b.TurnIDs[k] != tr.Turn[j+1] || b.Logp[k] != tr.Logp[j] {
				t.Fatalf("row %d position %d: ids/turn/logp differ", i, j)
			}
		} else if b.IDs[i*T+j+1] != tok.PadID || b.TurnIDs[k] != -1 || b.Logp[k] != 0 {
			t.Fatalf("row %d position %d: padding not clean", i, j)
		}
	}
	for i, tr := range trajs {
		if b.Rewards[i] != float32(tr.Reward) {
			t.Errorf("reward %d", i)
		}
	}
	if e := Collate(nil, tok.PadID); e.B != 0 || e.T != 0 {
		t.Errorf("empty collate %+v", e)
	}
	// Rows without owners (per-call samples) collate with owner -1.
	s := Collate([]Trajectory{{IDs: []int32{1, 2, 3}, ActionMask: []float32{0, 1}, Logp: []float32{0, -1}}}, 0)
	if !slices.Equal(s.Owner, []int8{-1, -1}) || !slices.Equal(s.ActionMask, []float32{0, 1}) {
		t.Errorf("ownerless collate %+v", s)
	}
}

func TestPadRows(t *testing.T) {
	got := PadRows([][]int32{{1, 2}, {}, {3, 4, 5}}, 3, 9)
	if !slices.Equal(got, []int32{1, 2, 9, 9, 9, 9, 3, 4, 5}) {
		t.Errorf("PadRows = %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a row longer than the width did not panic")
		}
	}()
	PadRows([][]int32{{1, 2}}, 1, 0)
}

func TestBehaviorStats(t *testing.T) {
	trajs := []Trajectory{
		{Reward: 1, Info: Info{Submitted: true, HiddenPass: true, NTurns: 3, NReads: 1, NEdits: 1}},
		{Reward: -0.5, Info: Info{Submitted: true, NTurns: 4, NTests: 2, NInvalid: 1, NEdits: 1}},
		{Reward: 0, Info: Info{HiddenPass: true, NTurns: 5, NReads: 1, NTests: 1}},
		{Reward: 0, Info: Info{NTurns: 0}},
	}
	s := BehaviorStats(trajs)
	want := Stats{PassRate: 0.25, SubmitRate: 0.5, Reads: 0.5, Tests: 0.75, Edits: 0.5, Turns: 3, Reward: 0.125, InvalidPerTurn: 1.0 / 12, Episodes: 4}
	if s != want {
		t.Errorf("stats\n%+v\nwant\n%+v", s, want)
	}
	if (BehaviorStats(nil) != Stats{}) {
		t.Error("empty stats")
	}
}
