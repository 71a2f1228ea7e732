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
