package agentrl

import (
	"reflect"
	"strings"
	"testing"
)

// The demonstration mix's late submits and malformed-call sets, and that their zero values leave the chapter's
// demonstrations as they were.
func TestDemonstrationRecipe(t *testing.T) {
	tok, train := testSetup(t)
	small := func() BaseConfig {
		c := DefaultBaseConfig()
		c.Demos, c.MappingDemos = 300, 0
		return c
	}
	submitted := func(demos []Trajectory) (n int) {
		for _, d := range demos {
			if d.Info.Submitted {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name          string
		late, submit  float64
		wantSubmitted func(n, total int) bool
		wantDescribed string
	}{
		{"stalls never submit", 0, 0, func(n, total int) bool { return n < total/10 }, "few (submit-first only)"},
		{"a stall submits at once", 1, 0, func(n, total int) bool { return n == total }, "all"},
		{"some stalls submit late", 0.3, 0, func(n, total int) bool { return n > total/2 && n < total }, "most, not all"},
	} {
		c := small()
		c.SubmitProb, c.LateSubmitProb, c.MalformedProb = tc.submit, tc.late, 0
		demos, err := c.Demonstrations(train, tok)
		if err != nil {
			t.Fatal(err)
		}
		if n := submitted(demos); !tc.wantSubmitted(n, len(demos)) {
			t.Errorf("%s: %d of %d demonstrations submitted, want %s", tc.name, n, len(demos), tc.wantDescribed)
		}
	}

	c := small()
	c.MalformedProb, c.Malformed = 1, MalformedUnknownTool
	demos, err := c.Demonstrations(train, tok)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range demos[:50] {
		for _, call := range strings.Split(tok.Decode(d.IDs), TokCall)[1:] {
			text, _, _ := strings.Cut(call, TokCallEnd)
			if _, err := ParseCall(TokCall + text + TokCallEnd); err != nil && err.Error() != ObsUnknownTool {
				t.Fatalf("unknown_tool slips: call %q parses as %v, want a valid call or an unknown tool", text, err)
			}
		}
		if d.Info.NInvalid > 1 {
			t.Fatalf("MalformedProb 1: %d malformed calls, want at most 1", d.Info.NInvalid)
		}
	}
	if n := InfoStats(infosOf(demos)).InvalidPerTurn; n == 0 {
		t.Error("MalformedProb 1: no malformed call")
	}

	// At their zero values the new settings draw nothing: the chapter's demonstrations are unchanged.
	plain := small()
	set := plain
	set.LateSubmitProb, set.Malformed, set.Obs = 0, MalformedNearMiss, ObsEcho
	a, err := plain.Demonstrations(train, tok)
	if err != nil {
		t.Fatal(err)
	}
	b, err := set.Demonstrations(train, tok)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("zero-valued recipe settings changed the demonstrations")
	}
	bad := small()
	bad.LateSubmitProb, bad.Malformed, bad.Obs = 2, "typo", "loud"
	err = bad.Validate()
	for _, want := range []string{"LateSubmitProb", "Malformed", "Obs"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to name %s", err, want)
		}
	}
}

func infosOf(trajs []Trajectory) []Info {
	infos := make([]Info, len(trajs))
	for i, t := range trajs {
		infos[i] = t.Info
	}
	return infos
}
