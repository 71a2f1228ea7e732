package ch12

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

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
	policy, err := gomlxmodel.New(gomlxmodel.DefaultConfig(ch.Tok.VocabSize()), 3)
	if err != nil {
		t.Fatal(err)
	}
	other, err := gomlxmodel.New(gomlxmodel.DefaultConfig(ch.Tok.VocabSize()), 4)
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
		var out strings.Builder
		if err := ch.printed(&out, "test/probe", tc.report, tc.parts...); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		calls := strings.Count(notices.String(), "cache: computed")
		if out.String() != tc.want || calls != tc.calls {
			t.Errorf("%s: printed %q after %d report runs, want %q after %d", tc.name, out.String(), calls, tc.want, tc.calls)
		}
	}
	if err := ch.Printed("test/nil", nil); err == nil {
		t.Error("Printed(nil report): no error")
	}
	failing := func(io.Writer) error { return fmt.Errorf("probe failed") }
	if err := ch.printed(io.Discard, "test/failing", failing); err == nil || !strings.Contains(err.Error(), "probe failed") {
		t.Errorf("a failing report: err = %v", err)
	}
}

// probeWords is read by aliasReport and written, through another name, by TestPrintedOpen.
var probeWords = []string{"first"}

func aliasReport(w io.Writer) error {
	_, err := fmt.Fprintln(w, "word", probeWords[0])
	return err
}

// probeFile is the file fileReport reads.
const probeFile = "ch12-test-probe.txt"

func fileReport(w io.Writer) error {
	b, err := os.ReadFile(probeFile)
	fmt.Fprintf(w, "file %s\n", b)
	return err
}

func envReport(w io.Writer) error {
	_, err := fmt.Fprintln(w, "env", os.Getenv("CH12_TEST_PROBE"))
	return err
}

// TestPrintedOpen checks that a report whose code reads what no key can hold (an environment variable, a package
// variable written through another name, a file) is run at every call, in the same program, and never stored or
// loaded.
func TestPrintedOpen(t *testing.T) {
	t.Setenv(store.Env, t.TempDir())
	ch, err := Setup()
	if err != nil {
		t.Fatal(err)
	}
	var notices strings.Builder
	ch.Store.Notices = &notices
	print := func(report func(io.Writer) error) string {
		t.Helper()
		var out strings.Builder
		if err := ch.printed(&out, "test/open", report); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	t.Setenv("CH12_TEST_PROBE", "one")
	if got := print(envReport); got != "env one\n" {
		t.Errorf("printed %q", got)
	}
	t.Setenv("CH12_TEST_PROBE", "two")
	if got := print(envReport); got != "env two\n" {
		t.Errorf("after the variable changed in the same program: printed %q, want env two", got)
	}
	if got := print(aliasReport); got != "word first\n" {
		t.Errorf("printed %q", got)
	}
	l := probeWords
	l[0] = "second"
	if got := print(aliasReport); got != "word second\n" {
		t.Errorf("after a write through another name: printed %q, want word second", got)
	}
	t.Chdir(t.TempDir())
	for _, v := range []string{"one", "two"} {
		if err := os.WriteFile(probeFile, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := print(fileReport); got != "file "+v+"\n" {
			t.Errorf("after the file changed in the same program: printed %q, want file %s", got, v)
		}
	}
	if n := strings.Count(notices.String(), ", not stored (its code reads"); n != 6 || strings.Contains(notices.String(), "cache: loaded") {
		t.Errorf("notices %q: want six reports run, none stored or loaded", notices.String())
	}
}
