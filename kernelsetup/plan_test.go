package main

import (
	"slices"
	"strings"
	"testing"
)

const gonbVersionM = `/root/go/bin/gonb: go1.26.8
	path	github.com/janpfeifer/gonb
	mod	github.com/janpfeifer/gonb	v0.11.1	h1:Wfv7K8QpAK4clQ+YZEpA0nt82/yusXVqqbne9aHgNXo=
	dep	github.com/fatih/color	v1.18.0	h1:S8gINlzdQ840/4pfAwic/ZE0djQEH3wM94VfqLTZcOM=
	build	-buildmode=exe
`

func TestModuleVersion(t *testing.T) {
	for _, tc := range []struct {
		name, out, mod, want string
	}{
		{"main module", gonbVersionM, gonbModule, "v0.11.1"},
		{"dependency", gonbVersionM, "github.com/fatih/color", "v1.18.0"},
		{"absent", gonbVersionM, toolsModule, ""},
		{"prefix is not a match", gonbVersionM, "github.com/janpfeifer/gon", ""},
		{"goimports", "x: go1.26.8\n\tpath\tgolang.org/x/tools/cmd/goimports\n\tmod\tgolang.org/x/tools\tv0.47.0\th1:x=\n",
			toolsModule, "v0.47.0"},
		{"wrapper main module", "x: go1.26.8\n\tpath\tgithub.com/janpfeifer/gonb\n\tmod\twrap\t(devel)\t\n" +
			"\tdep\tgithub.com/janpfeifer/gonb\tv0.11.1\th1:x=\n", gonbModule, "v0.11.1"},
		{"replaced", "x: go1.26.8\n\tdep\tgithub.com/janpfeifer/gonb\tv0.11.1\n\t=>\tgithub.com/fork/gonb\tv0.11.2\th1:x=\n" +
			"\tdep\tgolang.org/x/sys\tv0.1.0\n", gonbModule, "v0.11.2"},
		{"empty", "", gonbModule, ""},
	} {
		if got := moduleVersion(tc.out, tc.mod); got != tc.want {
			t.Errorf("%s: moduleVersion = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestShebangInterpreter(t *testing.T) {
	for line, want := range map[string]string{
		"#!/usr/bin/python3\n":                  "/usr/bin/python3",
		"#! /usr/bin/python3 -I":                "/usr/bin/python3",
		"#!/usr/bin/env python3":                "python3",
		"#!/usr/bin/env -S PYTHONPATH=x python": "python",
		"import sys":                            "",
		"#!":                                    "",
	} {
		if got := shebangInterpreter(line); got != want {
			t.Errorf("shebangInterpreter(%q) = %q, want %q", line, got, want)
		}
	}
}

func names(steps []step) []string {
	var n []string
	for _, s := range steps {
		n = append(n, s.Name)
	}
	return n
}

func TestPlan(t *testing.T) {
	const gonb, logFile = "/go/bin/gonb", "/cache/gonb/gonb.log"
	ready := state{GonbVersion: gonbVersion, GoimportsVersion: toolsVersion, GoplsVersion: goplsVersion,
		KernelArgv: wantKernelArgv(gonb, logFile), Jupyter: "/usr/bin/jupyter", JupyterPython: "/usr/bin/python3",
		Kernelspec: true, HaveApt: true, Root: true}

	if steps := plan(ready, gonb, logFile, true); len(steps) != 0 {
		t.Errorf("ready machine: plan = %v, want nothing", names(steps))
	}

	fresh := state{HaveApt: true, Root: true}
	got := names(plan(fresh, gonb, logFile, true))
	want := []string{"install gonb v0.11.1", "install goimports v0.47.0", "install gopls v0.23.0",
		"register the gonb kernel", "install Jupyter with apt-get"}
	if !slices.Equal(got, want) {
		t.Errorf("fresh machine: plan = %v, want %v", got, want)
	}
	if got := names(plan(fresh, gonb, logFile, false)); slices.Contains(got, "install Jupyter with apt-get") {
		t.Errorf("without -install-jupyter the plan must not install Jupyter: %v", got)
	}

	noApt := fresh
	noApt.HaveApt = false
	if got := names(plan(noApt, gonb, logFile, true)); slices.Contains(got, "install Jupyter with apt-get") {
		t.Errorf("without apt-get the plan must not use it: %v", got)
	}

	old := ready
	old.GonbVersion = "v0.10.6"
	got = names(plan(old, gonb, logFile, false))
	if !slices.Equal(got, []string{"install gonb v0.11.1", "register the gonb kernel"}) {
		t.Errorf("old gonb: plan = %v", got)
	}

	noisy := ready
	noisy.KernelArgv = []string{gonb, "--kernel", "{connection_file}", "--logtostderr"}
	if got := names(plan(noisy, gonb, logFile, false)); !slices.Equal(got, []string{"register the gonb kernel"}) {
		t.Errorf("kernel with other flags: plan = %v", got)
	}

	// GoNB is built through a throwaway module: `go install module@v0.11.1` fails on the proxy.
	st := plan(fresh, gonb, logFile, false)[0]
	if st.Kind != runInTmpMod || strings.Join(st.Cmds[len(st.Cmds)-1], " ") != "go install "+gonbModule {
		t.Errorf("gonb step = %+v", st)
	}
	apt := plan(fresh, gonb, logFile, true)[4]
	if !slices.Contains(apt.Env, "DEBIAN_FRONTEND=noninteractive") || !slices.Contains(apt.Cmds[1], aptLockTimeout) {
		t.Errorf("apt step = %+v", apt)
	}
}

func TestJupyterHelp(t *testing.T) {
	for _, tc := range []struct {
		s    state
		want []string
	}{
		{state{HaveApt: true}, []string{"jupyter not found", "-install-jupyter", "jupyter-nbconvert", "pip install"}},
		{state{Jupyter: "/usr/bin/jupyter"}, []string{"kernelspec", "pip install"}},
		{state{Jupyter: "j", Kernelspec: true, JupyterPython: "/usr/bin/python3", MissingModules: []string{"nbclient"},
			HaveApt: true}, []string{"/usr/bin/python3 cannot import nbclient", "python3-nbclient"}},
	} {
		msg := jupyterHelp(tc.s)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("jupyterHelp(%+v) = %q, missing %q", tc.s, msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("jupyterHelp must be one line: %q", msg)
		}
	}
}
