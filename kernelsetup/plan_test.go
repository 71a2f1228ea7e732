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

func names(steps []step) []string {
	var n []string
	for _, s := range steps {
		n = append(n, s.Name)
	}
	return n
}

func TestPlan(t *testing.T) {
	const gonb, logFile, pjrt = "/go/bin/gonb", "/cache/gonb/gonb.log", "/data/agentrl/pjrt"
	ready := state{GonbVersion: gonbVersion, GoimportsVersion: toolsVersion, GoplsVersion: goplsVersion,
		KernelArgv: wantKernelArgv(gonb, logFile), Jupyter: "/usr/bin/jupyter", JupyterPython: "/usr/bin/python3",
		Kernelspec: true, HaveApt: true, Root: true, LogDir: true, PJRT: true}
	fresh := state{HaveApt: true, Root: true}
	with := func(s state, f func(*state)) state { f(&s); return s }
	all := []string{"install gonb v0.11.1", "install goimports v0.47.0", "install gopls v0.23.0",
		"register the gonb kernel", "create GoNB's log folder", "install the PJRT CPU plugin",
		"install Jupyter with apt-get"}

	for _, tc := range []struct {
		name           string
		s              state
		pjrtDir        string
		installJupyter bool
		want           []string
	}{
		{"ready", ready, pjrt, true, nil},
		{"fresh", fresh, pjrt, true, all},
		{"fresh without -install-jupyter", fresh, pjrt, false, all[:6]},
		{"fresh without apt-get", with(fresh, func(s *state) { s.HaveApt = false }), pjrt, true, all[:6]},
		{"fresh with -no-xla", fresh, "", true, append(all[:5:5], all[6])},
		{"old gonb", with(ready, func(s *state) { s.GonbVersion = "v0.10.6" }), pjrt, false,
			[]string{"install gonb v0.11.1", "register the gonb kernel"}},
		{"kernel with other flags", with(ready, func(s *state) {
			s.KernelArgv = []string{gonb, "--kernel", "{connection_file}", "--logtostderr"}
		}), pjrt, false, []string{"register the gonb kernel"}},
		// The kernel exits at start when its log folder is gone; the argv is right, so nothing else is redone.
		{"log folder removed", with(ready, func(s *state) { s.LogDir = false }), pjrt, false,
			[]string{"create GoNB's log folder"}},
		// -n must show the download, and a machine without Jupyter must still get the plugin.
		{"no plugin, no Jupyter", with(ready, func(s *state) { s.PJRT, s.Jupyter, s.Kernelspec = false, "", false }),
			pjrt, false, []string{"install the PJRT CPU plugin"}},
		{"no plugin, -no-xla", with(ready, func(s *state) { s.PJRT = false }), "", false, nil},
	} {
		if got := names(plan(tc.s, gonb, logFile, tc.pjrtDir, tc.installJupyter)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: plan = %q, want %q", tc.name, got, tc.want)
		}
	}

	steps := plan(fresh, gonb, logFile, pjrt, true)
	// GoNB is built through a throwaway module: `go install module@v0.11.1` fails on the proxy.
	if st := steps[0]; st.Kind != runInTmpMod || strings.Join(st.Cmds[len(st.Cmds)-1], " ") != "go install "+gonbModule {
		t.Errorf("gonb step = %+v", st)
	}
	if st := steps[4]; st.Kind != makeDir || st.Path != "/cache/gonb" {
		t.Errorf("log folder step = %+v", st)
	}
	if st := steps[5]; st.Kind != installPlugin || st.Path != pjrt || !strings.Contains(describe(st), "pip download") {
		t.Errorf("PJRT step = %+v (%s)", st, describe(st))
	}
	if apt := steps[6]; !slices.Contains(apt.Env, "DEBIAN_FRONTEND=noninteractive") || !slices.Contains(apt.Cmds[1], aptLockTimeout) {
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
