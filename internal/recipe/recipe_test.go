package recipe

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
)

func TestParse(t *testing.T) {
	c, err := Parse("a", "  obs=terse late-submit=0.2   tests=0.1/0.8/0.1 lr=3e-4 malformed=unknown_tool base-seed=4 mapping-demos=10 reread=0.2 give-up=0.1 read-weight=0.3")
	if err != nil {
		t.Fatal(err)
	}
	base, rl := agentrl.DefaultBaseConfig(), agentrl.DefaultRLConfig()
	base.Obs, rl.Obs = agentrl.ObsTerse, agentrl.ObsTerse
	base.LateSubmitProb, base.TestsAfterEdit, base.Malformed, base.Seed, base.MappingDemos = 0.2, []float64{0.1, 0.8, 0.1}, agentrl.MalformedUnknownTool, 4, 10
	base.RereadProb, base.GiveUpAfterReadProb, base.ReadChoiceWeight = 0.2, 0.1, 0.3
	rl.LR = 3e-4
	if !reflect.DeepEqual(c.Base, base) || !reflect.DeepEqual(c.RL, rl) {
		t.Errorf("Parse = %+v / %+v, want %+v / %+v", c.Base, c.RL, base, rl)
	}
	if c.Settings != "obs=terse late-submit=0.2 tests=0.1/0.8/0.1 lr=3e-4 malformed=unknown_tool base-seed=4 mapping-demos=10 reread=0.2 give-up=0.1 read-weight=0.3" {
		t.Errorf("Settings = %q", c.Settings)
	}
	if c, err := Parse("chapter", ""); err != nil || !reflect.DeepEqual(c.Base, agentrl.DefaultBaseConfig()) || !reflect.DeepEqual(c.RL, agentrl.DefaultRLConfig()) {
		t.Errorf("Parse of no settings = %+v, %v: want the chapter's configurations", c, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ settings, want string }{
		{"late-submit", "want key=value"},
		{"nope=1", `unknown setting "nope"`},
		{"lr=1 lr=2", "lr set twice"},
		{"lr=fast", `"fast" is not a number`},
		{"late-submit=1.5", "LateSubmitProb = 1.5"},
		{"tests=0.5/0.4", "TestsAfterEdit"},
		{"obs=verbose", `"verbose": want echo, terse or inputs`},
		{"malformed=typo", `want near_miss or unknown_tool`},
		{"base-seed=-1", "not a seed"},
		{"reread=2", "RereadProb = 2"},
		{"read-weight=-1", "ReadChoiceWeight = -1"},
	} {
		if _, err := Parse("x", tc.settings); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.settings, err, tc.want)
		}
	}
}

func TestParseFile(t *testing.T) {
	cands, err := ParseFile("# a comment\n\nchapter\nterse obs=terse\n")
	if err != nil || len(cands) != 2 || cands[0].Name != "chapter" || cands[1].RL.Obs != agentrl.ObsTerse {
		t.Fatalf("ParseFile = %+v, %v", cands, err)
	}
	for _, text := range []string{"", "# only\n", "a\na lr=1e-3\n", "a lr=x\n"} {
		if _, err := ParseFile(text); err == nil {
			t.Errorf("ParseFile(%q) succeeded", text)
		}
	}
}
