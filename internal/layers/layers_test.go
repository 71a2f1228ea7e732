// Package layers holds only a test: that every package of the module imports only packages of its layer or
// below, so that dependencies point down as the module grows.
package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/agentrl-go/agentrl/"

// layers are the module's layers, lowest first, each named by the package paths (or path prefixes, ending in "/")
// it holds (DESIGN.md, "Layers"). A package imports packages of its own layer or below; a leaf imports no package
// of the module.
var layers = []struct {
	name  string
	paths []string
}{
	{"leaves", []string{"codekey", "internal/"}},
	{"the model", []string{"gomlxmodel"}},
	{"the library", []string{"agentrl"}},
	{"the store", []string{"store"}},
	{"runs", []string{"runs"}},
	{"figures", []string{"chart", "chart/"}},
	{"the chapter", []string{"ch12"}},
	{"tools", []string{"cmd/", "notebooks", "notebooks/", "kernelsetup", "kernelsetup/", "site", "site/"}},
}

// layerOf is the index in layers of the module package at path (without the module's prefix), or -1.
func layerOf(path string) int {
	for i, l := range layers {
		for _, p := range l.paths {
			if path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
				return i
			}
		}
	}
	return -1
}

// TestLayers reads the module's import graph (go list) and checks each package against layers; a package the
// table does not place fails with a message saying where to put it. kernelsetup, which sets up the kernel before
// anything is built, links no package of GoMLX's (go-xla's installer runs as a program of its own).
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		at := layerOf(pkg)
		if at < 0 {
			t.Errorf("%s is in no layer: add it to the table in internal/layers (and to DESIGN.md's)", pkg)
			continue
		}
		for _, im := range fields[1:] {
			dep, ok := strings.CutPrefix(im, module)
			if !ok {
				continue
			}
			switch d := layerOf(dep); {
			case layers[at].name == "leaves":
				t.Errorf("%s, a leaf, imports %s: a leaf imports nothing of the module", pkg, dep)
			case d > at:
				t.Errorf("%s (%s) imports %s (%s), a layer above it", pkg, layers[at].name, dep, layers[d].name)
			}
		}
	}
	deps, err := exec.Command("go", "list", "-deps", module+"kernelsetup").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(deps)) {
		if strings.HasPrefix(dep, "github.com/gomlx/") {
			t.Errorf("kernelsetup depends on %s: it must link no GoMLX package (go-xla's installer runs as kernelsetup/goxla)", dep)
		}
	}
}
