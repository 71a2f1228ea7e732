package ch12

// A file of its own: a key whose outside code is a test's holds the code of the test's whole file (the program
// around it), and this file's reports read what no key can hold.

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/store"
)

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
