package codekey_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
)

// TestReplacedModuleRekeys checks that a key holds the code of a package on disk that its code imports from another
// module on disk (a dependency replaced by a local copy, as one that a maintainer works on: replace
// github.com/gomlx/gomlx => ../gomlx): an edit of the copy changes the key.
func TestReplacedModuleRekeys(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("app/go.mod", "module example.com/app\n\ngo 1.26\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ../dep\n")
	write("app/lib/lib.go", "package lib\n\nimport \"example.com/dep/ops\"\n\nfunc Step(x float64) float64 { return ops.Scale(x) }\n")
	write("dep/go.mod", "module example.com/dep\n\ngo 1.26\n")
	write("dep/ops/ops.go", "package ops\n\nfunc Scale(x float64) float64 { return x * 0.999 }\n")
	later := time.Now().Add(time.Hour) // this program takes itself for started after every edit
	defer codekey.ForgetCode(time.Now())
	digest := func() (string, []string) {
		t.Helper()
		codekey.ForgetCode(later)
		d, pkgs, err := codekey.CodeOf(filepath.Join(root, "app", "lib"))
		if err != nil {
			t.Fatal(err)
		}
		return d, pkgs
	}
	before, pkgs := digest()
	write("dep/ops/ops.go", "package ops\n\nfunc Scale(x float64) float64 { return x * 0.99 }\n")
	if after, _ := digest(); after == before {
		t.Errorf("an edit of the replaced module's package example.com/dep/ops did not change the key (its packages: %v)", pkgs)
	}
}
