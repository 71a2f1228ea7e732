package agentrl

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

const hashedProgram = `package main

import "fmt"

type counter struct{ n int }

func (c *counter) add(k int) { c.n += k * step }

const step = 2

var total = counter{}

// run is the root.
func run() int { total.add(helper()); return total.n }

func helper() int { return 3 }

func unrelated() { fmt.Println("not reached") }

func main() { fmt.Println(run()) }
`

// TestCodeHash checks which edits of a program change the hash of what run reaches: every declaration it
// reaches counts, through calls, variables, types and their methods, and constants; other declarations and
// comments do not.
func TestCodeHash(t *testing.T) {
	ref := hashOf(t, hashedProgram, "run")
	tests := []struct {
		name, old, new string
		changes        bool
	}{
		{"the root", "return total.n }", "return total.n + 0 }", true},
		{"a function it calls", "return 3 }", "return 4 }", true},
		{"a method of a variable's type", "c.n += k", "c.n -= k", true},
		{"a constant a method reads", "const step = 2", "const step = 5", true},
		{"a type it reaches", "struct{ n int }", "struct{ n, m int }", true},
		{"a function it does not reach", `"not reached"`, `"still not reached"`, false},
		{"the program's main", "fmt.Println(run())", "fmt.Print(run())", false},
		{"a comment", "// run is the root.", "// run, edited.", false},
		{"a comment in a body", "{ return 3 }", "{ /* three */ return 3 }", false},
		{"a trailing comment", "const step = 2", "const step = 2 // per call", false},
		{"the layout", "{ total.add(helper()); return total.n }", "{\n\ttotal.add(helper())\n\n\treturn total.n\n}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(hashedProgram, tt.old) {
				t.Fatalf("%q not in the program", tt.old)
			}
			got := hashOf(t, strings.Replace(hashedProgram, tt.old, tt.new, 1), "run")
			if (got != ref) != tt.changes {
				t.Errorf("hash changed: %v, want %v", got != ref, tt.changes)
			}
		})
	}
	file := writeProgram(t, hashedProgram)
	if _, err := codeHash(file, "missing"); err == nil || !strings.Contains(err.Error(), `no top-level declaration "missing"`) {
		t.Errorf("an unknown root: %v", err)
	}
	if _, err := codeHash(filepath.Join(t.TempDir(), "none.go"), "run"); err == nil {
		t.Error("a missing file: no error")
	}
}

// TestCodeHashOfCaller checks that CodeHash reads its caller's file (here this one).
func TestCodeHashOfCaller(t *testing.T) {
	got, err := CodeHash("hashedProgram")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := codeHash("codehash_test.go", "hashedProgram"); got != want || len(got) != 16 {
		t.Errorf("CodeHash = %q, want %q", got, want)
	}
}

func hashOf(t *testing.T, src, root string) string {
	t.Helper()
	h, err := codeHash(writeProgram(t, src), root)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func writeProgram(t *testing.T, src string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// BenchmarkCodeVersion measures what every program that keys a result pays once: hashing the library's code.
func BenchmarkCodeVersion(b *testing.B) {
	for b.Loop() {
		libraryHash(map[string]fs.FS{"agentrl": librarySource, "gomlxmodel": gomlxmodel.Source()})
	}
}
