package setup

import (
	"os"
	"path/filepath"
	"testing"
)

func TestShebangInterpreter(t *testing.T) {
	for line, want := range map[string]string{
		"#!/usr/bin/python3\n":                   "/usr/bin/python3",
		"#! /usr/bin/python3 -I":                 "/usr/bin/python3",
		"#!/usr/bin/env python3":                 "python3",
		"#!/usr/bin/env -S python3 -u":           "python3",
		"#!/usr/bin/env -S PYTHONPATH=x python":  "python",
		"#!/bin/env -i python3.11 -E":            "python3.11",
		"#!/usr/bin/env -u PYTHONPATH python3":   "python3",
		"#!/usr/bin/env --chdir /tmp -S python3": "python3",
		"import sys":                             "",
		"#!":                                     "",
		"#!/usr/bin/env -S":                      "",
	} {
		if got := shebangInterpreter(line); got != want {
			t.Errorf("shebangInterpreter(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestJupyterFromEnv(t *testing.T) {
	script := filepath.Join(t.TempDir(), "jupyter")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(JupyterEnv, script)
	if got, err := Jupyter(); got != script || err != nil {
		t.Errorf("Jupyter() = %q, %v; want %q", got, err, script)
	}
	if got := ScriptInterpreter(script); got != "/bin/sh" {
		t.Errorf("ScriptInterpreter = %q, want /bin/sh", got)
	}
	t.Setenv(JupyterEnv, script+".missing")
	if _, err := Jupyter(); err == nil {
		t.Error("a missing $AGENTRL_JUPYTER: no error")
	}
}

// TestJupyterPrefersVenv: the repository's .venv/bin/jupyter comes before the machine's Jupyter, found from any
// folder of the repository, and $AGENTRL_JUPYTER before both.
func TestJupyterPrefersVenv(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "notebooks")
	venvJupyter := VenvJupyter(root)
	for _, dir := range []string{sub, filepath.Dir(venvJupyter)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	t.Setenv(JupyterEnv, "")
	if got, err := RepoRoot(); got != root || err != nil {
		t.Errorf("RepoRoot() = %q, %v; want %q", got, err, root)
	}
	system, _ := SystemJupyter()
	if got, _ := Jupyter(); got != system {
		t.Errorf("without .venv/bin/jupyter: Jupyter() = %q, want SystemJupyter's %q", got, system)
	}
	if err := os.WriteFile(venvJupyter, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Jupyter(); got != venvJupyter || err != nil {
		t.Errorf("Jupyter() = %q, %v; want %q", got, err, venvJupyter)
	}
	if got, _ := SystemJupyter(); got == venvJupyter {
		t.Errorf("SystemJupyter() = %q, the virtual environment's", got)
	}
	other := filepath.Join(root, "jupyter")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(JupyterEnv, other)
	if got, err := Jupyter(); got != other || err != nil {
		t.Errorf("with $%s: Jupyter() = %q, %v; want %q", JupyterEnv, got, err, other)
	}
}
