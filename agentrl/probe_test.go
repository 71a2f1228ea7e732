package agentrl

import (
	"math"
	"slices"
	"testing"
)

func TestCallProbs(t *testing.T) {
	tok, train := testSetup(t)
	policy := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	tasks := []Task{train[0], train[1], train[2], train[3]}
	envs, err := MakeEnvs(EnvFactoryOf(cfg), len(tasks))
	if err != nil {
		t.Fatal(err)
	}
	// Every call the masked sampler drew must have, as its CallProbs probability in the view it was drawn from,
	// the product of its sampling probabilities.
	_, samples, err := ContextRolloutBatch(policy, envs, tasks, tok, KeepObs(1), 6, 1, NewRNG(3))
	if err != nil {
		t.Fatal(err)
	}
	var views, calls [][]int32
	var want []float64
	for _, s := range samples {
		n, logp := 0, 0.0
		for j := len(s.Sample.ActionMask) - 1; j >= 0 && s.Sample.ActionMask[j] == 1; j-- {
			n, logp = n+1, logp+float64(s.Sample.Logp[j])
		}
		views = append(views, s.Sample.IDs[:len(s.Sample.IDs)-n])
		calls = append(calls, s.Sample.IDs[len(s.Sample.IDs)-n:])
		want = append(want, logp)
	}
	probs, err := CallProbs(policy, views, calls, tok.PadID)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != len(views) || len(probs[0]) != len(calls) {
		t.Fatalf("probs are %d×%d, want %d×%d", len(probs), len(probs[0]), len(views), len(calls))
	}
	for i := range views {
		if got := math.Log(probs[i][i]); math.Abs(got-want[i]) > 1e-4 {
			t.Errorf("sample %d (%q): log p %.6f, sampled with %.6f", i, tok.Decode(calls[i]), got, want[i])
		}
	}
	// Distinct well-formed calls are disjoint events.
	distinct := [][]int32{tok.EncodeCall(ToolRead), tok.EncodeCall(ToolTest), tok.EncodeCall(ToolSubmit)}
	for _, op := range Ops() {
		distinct = append(distinct, tok.EncodeCall(ToolEdit, op))
	}
	p, err := CallProbs(policy, views[:3], distinct, tok.PadID)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range p {
		if total := floatSum(row); total > 1+1e-6 || slices.Min(row) <= 0 {
			t.Errorf("view %d: call probabilities %v (sum %.4f)", i, row, total)
		}
	}

	long := make([]int32, policy.Config().MaxLen)
	for _, tc := range []struct {
		name         string
		views, calls [][]int32
	}{
		{"no views", nil, distinct},
		{"no calls", views, nil},
		{"empty view", [][]int32{{}}, distinct},
		{"empty call", views, [][]int32{{}}},
		{"longer than the context", [][]int32{long}, distinct},
	} {
		if _, err := CallProbs(policy, tc.views, tc.calls, tok.PadID); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func floatSum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}
