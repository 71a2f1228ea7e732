package ch12

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/store"
)

func countingReport(w io.Writer) error {
	_, err := fmt.Fprintf(w, "probe line %d\n", 7)
	return err
}

func otherReport(w io.Writer) error {
	_, err := fmt.Fprintln(w, "another probe")
	return err
}

func TestPrinted(t *testing.T) {
	t.Setenv(store.Env, t.TempDir())
	ch, err := Setup()
	if err != nil {
		t.Fatal(err)
	}
	policy, err := gomlxmodel.New(ch.Engine, gomlxmodel.DefaultConfig(ch.Tok.VocabSize()), 3)
	if err != nil {
		t.Fatal(err)
	}
	other, err := gomlxmodel.New(ch.Engine, gomlxmodel.DefaultConfig(ch.Tok.VocabSize()), 4)
	if err != nil {
		t.Fatal(err)
	}
	var notices strings.Builder
	ch.Store.Notices = &notices
	for _, tc := range []struct {
		name   string
		report func(io.Writer) error
		parts  []any
		calls  int // reports run so far ("cache: computed" notices): a stored text is printed without running report
		want   string
	}{
		{"first run", countingReport, []any{policy, 2}, 1, "probe line 7\n"},
		{"stored", countingReport, []any{policy, 2}, 1, "probe line 7\n"},
		{"another seed", countingReport, []any{policy, 3}, 2, "probe line 7\n"},
		{"another policy", countingReport, []any{other, 2}, 3, "probe line 7\n"},
		{"other code", otherReport, []any{policy, 2}, 4, "another probe\n"},
		{"other code, stored", otherReport, []any{policy, 2}, 4, "another probe\n"},
	} {
		codekey.NewProgram() // each case stands for a program of its own (the next cell, the notebook again)
		var out strings.Builder
		if err := ch.printed(&out, "test/probe", tc.report, tc.parts...); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		calls := strings.Count(notices.String(), "cache: computed")
		if out.String() != tc.want || calls != tc.calls {
			t.Errorf("%s: printed %q after %d report runs, want %q after %d\n%s", tc.name, out.String(), calls, tc.want, tc.calls, notices.String())
		}
	}
	var out strings.Builder // asked again in the same program: the program may have changed what the report reads
	if err := ch.printed(&out, "test/probe", otherReport, policy, 2); err != nil || out.String() != "another probe\n" ||
		strings.Count(notices.String(), "cache: computed") != 5 {
		t.Errorf("the same report twice in one program: %v, %q: want it run again", err, out.String())
	}
	if err := ch.Printed("test/nil", nil); err == nil {
		t.Error("Printed(nil report): no error")
	}
	failing := func(io.Writer) error { return fmt.Errorf("probe failed") }
	if err := ch.printed(io.Discard, "test/failing", failing); err == nil || !strings.Contains(err.Error(), "probe failed") {
		t.Errorf("a failing report: err = %v", err)
	}
}
