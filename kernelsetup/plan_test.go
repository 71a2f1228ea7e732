package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/internal/pjrt"
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

// Where the tests set up: Go's bin folder, GoNB's log, the plugin's folder, the user's Jupyter data folder and
// the repository's virtual environment.
const gonb, logFile, pjrtFolder, userData, venv = "/go/bin/gonb", "/cache/gonb/gonb.log", "/data/agentrl/pjrt",
	"/home/u/.local/share/jupyter", "/repo/.venv"

// at returns the locations of stack st with the plugin's folder pjrtDir.
func at(st stack, pjrtDir string) locations {
	loc := locations{stack: st, gobin: "/go/bin", gonbPath: gonb, logFile: logFile, pjrtDir: pjrtDir, dataDir: userData}
	if st == venvStack {
		loc.venv, loc.dataDir = venv, venv+"/share/jupyter"
	}
	return loc
}

// TestPlan plans the system stack: the machine's Jupyter, Debian's installed with apt-get when asked for.
func TestPlan(t *testing.T) {
	ready := state{GonbVersion: gonbVersion, GoimportsVersion: toolsVersion, GoplsVersion: goplsVersion,
		KernelArgv: wantKernelArgv(gonb, logFile), KernelPath: "/go/bin:${PATH}", Jupyter: "/usr/bin/jupyter",
		JupyterPython: "/usr/bin/python3", Kernelspec: true, HaveApt: true, Root: true, LogDir: true, PJRT: true,
		Platform: "linux/amd64", XLA: true}
	fresh := state{HaveApt: true, Root: true, Platform: "linux/amd64", XLA: true}
	with := func(s state, f func(*state)) state { f(&s); return s }
	all := []string{"install gonb v0.11.1", "install goimports v0.47.0", "install gopls v0.23.0",
		"register the gonb kernel", "create GoNB's log folder", "install Jupyter with apt-get",
		"install the PJRT CPU plugin"}
	noPlugin := all[:6]
	noJupyter := append(all[:5:5], all[6])

	for _, tc := range []struct {
		name           string
		s              state
		pjrtDir        string
		installJupyter bool
		want           []string
	}{
		{"ready", ready, pjrtFolder, true, nil},
		{"fresh", fresh, pjrtFolder, true, all},
		{"fresh without -install-jupyter", fresh, pjrtFolder, false, noJupyter},
		{"fresh without apt-get", with(fresh, func(s *state) { s.HaveApt = false }), pjrtFolder, true, noJupyter},
		{"fresh with -no-xla", fresh, "", true, noPlugin},
		// The plugin is planned last wherever a source serves the platform: go-xla's installer on darwin/arm64,
		// nothing on darwin/amd64, and nothing where GoMLX does not compile its XLA backend (linux/arm64 in
		// GoMLX v0.26); Jupyter's steps are the same on all.
		{"fresh darwin/arm64", with(fresh, func(s *state) { s.Platform = "darwin/arm64"; s.HaveApt = false }),
			pjrtFolder, true, noJupyter},
		{"fresh darwin/amd64", with(fresh, func(s *state) { s.Platform = "darwin/amd64"; s.HaveApt = false }),
			pjrtFolder, true, all[:5]},
		{"fresh linux/arm64", with(fresh, func(s *state) { s.Platform = "linux/arm64"; s.XLA = false }),
			pjrtFolder, true, noPlugin},
		{"fresh linux/arm64 with XLA compiled in", with(fresh, func(s *state) { s.Platform = "linux/arm64" }),
			pjrtFolder, true, all},
		{"old gonb", with(ready, func(s *state) { s.GonbVersion = "v0.10.6" }), pjrtFolder, false,
			[]string{"install gonb v0.11.1", "register the gonb kernel"}},
		{"kernel with other flags", with(ready, func(s *state) {
			s.KernelArgv = []string{gonb, "--kernel", "{connection_file}", "--logtostderr"}
		}), pjrtFolder, false, []string{"set the gonb kernel's argv and PATH"}},
		// A kernel.json written before the kernel carried Go's bin folder on its PATH.
		{"kernel without PATH", with(ready, func(s *state) { s.KernelPath = "" }), pjrtFolder, false,
			[]string{"set the gonb kernel's argv and PATH"}},
		{"no kernel.json", with(ready, func(s *state) { s.KernelArgv, s.KernelPath = nil, "" }), pjrtFolder, false,
			[]string{"register the gonb kernel"}},
		// The kernel exits at start when its log folder is gone; the argv is right, so nothing else is redone.
		{"log folder removed", with(ready, func(s *state) { s.LogDir = false }), pjrtFolder, false,
			[]string{"create GoNB's log folder"}},
		// -n must show the download, and a machine without Jupyter must still get the plugin.
		{"no plugin, no Jupyter", with(ready, func(s *state) { s.PJRT, s.Jupyter, s.Kernelspec = false, "", false }),
			pjrtFolder, false, []string{"install the PJRT CPU plugin"}},
		{"no plugin, -no-xla", with(ready, func(s *state) { s.PJRT = false }), "", false, nil},
	} {
		if got := names(plan(tc.s, at(systemStack, tc.pjrtDir), tc.installJupyter)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: plan = %q, want %q", tc.name, got, tc.want)
		}
	}

	steps := plan(fresh, at(systemStack, pjrtFolder), true)
	// GoNB is built through a throwaway module: `go install module@v0.11.1` fails on the proxy.
	if st := steps[0]; st.Kind != runInTmpMod || strings.Join(st.Cmds[len(st.Cmds)-1], " ") != "go install "+gonbModule {
		t.Errorf("gonb step = %+v", st)
	}
	if st := steps[3]; st.Kind != writeKernel || st.KernelDir != userData+"/kernels/gonb" || len(st.Env) > 0 {
		t.Errorf("kernel step = %+v", st)
	}
	if st := steps[4]; st.Kind != makeDir || st.Path != "/cache/gonb" {
		t.Errorf("log folder step = %+v", st)
	}
	if apt := steps[5]; !slices.Contains(apt.Env, "DEBIAN_FRONTEND=noninteractive") || !slices.Contains(apt.Cmds[1], aptLockTimeout) {
		t.Errorf("apt step = %+v", apt)
	}
	if st := steps[6]; st.Kind != installPlugin || st.Path != pjrtFolder || !slices.Equal(st.Sources, []pluginSource{fromWheel, fromGoXLA}) ||
		!strings.Contains(describe(st), "pip download") || !strings.Contains(describe(st), "go-xla's installer") {
		t.Errorf("PJRT step = %+v (%s)", st, describe(st))
	}
	darwin := plan(with(fresh, func(s *state) { s.Platform = "darwin/arm64" }), at(systemStack, pjrtFolder), false)
	if st := darwin[len(darwin)-1]; !slices.Equal(st.Sources, []pluginSource{fromGoXLA}) || strings.Contains(describe(st), "pip") {
		t.Errorf("darwin/arm64 PJRT step = %+v (%s)", st, describe(st))
	}
	if st := plan(with(ready, func(s *state) { s.KernelPath = "" }), at(systemStack, pjrtFolder), false)[0]; st.Kind != patchKernel ||
		st.Path != gonb || st.KernelDir != userData+"/kernels/gonb" {
		t.Errorf("kernel patch step = %+v", st)
	}
}

// TestPluginSources runs the plugin step's fallbacks with stand-in installers: the wheel where it exists, else or
// when it fails go-xla's installer, and when both fail one line and no plugin (setup goes on).
func TestPluginSources(t *testing.T) {
	errWheel := errors.New("pip download lammps-jax-pjrt-cpu==0.11.2: exit status 1:\n    ERROR: No matching distribution")
	errGitHub := errors.New("failed to download https://api.github.com/...: dial tcp: no route to host")
	for _, tc := range []struct {
		name     string
		platform string
		fail     map[pluginSource]error
		tried    []pluginSource
		want     pluginSource
		wantErr  []string // substrings of the error; nil: success
	}{
		{"linux/amd64, wheel reachable", "linux/amd64", nil, []pluginSource{fromWheel}, fromWheel, nil},
		{"linux/amd64, wheel unreachable", "linux/amd64", map[pluginSource]error{fromWheel: errWheel},
			[]pluginSource{fromWheel, fromGoXLA}, fromGoXLA, nil},
		{"linux/amd64, nothing reachable", "linux/amd64", map[pluginSource]error{fromWheel: errWheel, fromGoXLA: errGitHub},
			[]pluginSource{fromWheel, fromGoXLA}, 0, []string{"PyPI wheel", "exit status 1", "go-xla's installer", "no route"}},
		{"darwin/arm64", "darwin/arm64", nil, []pluginSource{fromGoXLA}, fromGoXLA, nil},
		{"darwin/arm64, GitHub unreachable", "darwin/arm64", map[pluginSource]error{fromGoXLA: errGitHub},
			[]pluginSource{fromGoXLA}, 0, []string{"go-xla's installer", "no route"}},
		{"linux/arm64", "linux/arm64", nil, []pluginSource{fromGoXLA}, fromGoXLA, nil},
		{"darwin/amd64", "darwin/amd64", nil, nil, 0, []string{"no source"}},
	} {
		var tried []pluginSource
		got, err := tryPluginSources("/x", pluginSources(tc.platform), func(src pluginSource, dir string) error {
			tried = append(tried, src)
			return tc.fail[src]
		})
		if !slices.Equal(tried, tc.tried) {
			t.Errorf("%s: tried %v, want %v", tc.name, tried, tc.tried)
		}
		switch {
		case tc.wantErr == nil && (err != nil || got != tc.want):
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, err, tc.want)
		case tc.wantErr != nil && err == nil:
			t.Errorf("%s: no error", tc.name)
		case err != nil:
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q lacks %q", tc.name, err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error is not one line: %q", tc.name, err)
			}
		}
	}
}

// TestPJRTInstalled: the pinned library, or go-xla's installer's link to a versioned plugin, counts as installed.
func TestPJRTInstalled(t *testing.T) {
	dir := t.TempDir()
	if pjrtInstalled(dir) {
		t.Error("empty folder: installed")
	}
	lib := filepath.Join(dir, pjrt.PluginName)
	os.WriteFile(lib, []byte("not the pinned plugin"), 0o644)
	if pjrtInstalled(dir) {
		t.Error("unpinned regular file: installed")
	}
	os.Remove(lib)
	os.Symlink("pjrt_c_api_cpu_v0.83.3_plugin.so", lib)
	if pjrtInstalled(dir) {
		t.Error("dangling link: installed")
	}
	os.WriteFile(filepath.Join(dir, "pjrt_c_api_cpu_v0.83.3_plugin.so"), []byte("x"), 0o644)
	if !pjrtInstalled(dir) {
		t.Error("go-xla's link: not installed")
	}
}

// TestPatchedKernelSpec: the kernel gets Go's bin folder first on its PATH, ${PATH} is left for jupyter_client to
// substitute, the rest of kernel.json stays, and patching again changes nothing.
func TestPatchedKernelSpec(t *testing.T) {
	// What `gonb --install --raw_error` v0.11.1 writes (json.Encoder, no indent).
	written := `{"argv":["/go/bin/gonb","--kernel","{connection_file}","--raw_error"],"display_name":"Go (gonb)",` +
		`"language":"go","interrupt_mode":"message","env":{}}` + "\n"
	argv := wantKernelArgv("/go/bin/gonb", "/cache/gonb/gonb.log")
	path := wantKernelPath("/go/bin")
	if path != "/go/bin:${PATH}" {
		t.Errorf("wantKernelPath = %q", path)
	}
	once, err := patchedKernelSpec([]byte(written), argv, path)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := patchedKernelSpec(once, argv, path)
	if err != nil || string(twice) != string(once) {
		t.Errorf("patching twice changed the spec (%v):\n%s\n%s", err, once, twice)
	}
	var spec kernelSpec
	if err := json.Unmarshal(once, &spec); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.argv(), argv) || spec["env"].(map[string]any)["PATH"] != path ||
		spec["display_name"] != "Go (gonb)" || spec["interrupt_mode"] != "message" {
		t.Errorf("patched spec = %s", once)
	}
	// Other env entries a user added stay.
	other, _ := patchedKernelSpec([]byte(`{"argv":[],"env":{"GOFLAGS":"-mod=mod","PATH":"/old"}}`), argv, path)
	if !strings.Contains(string(other), `"GOFLAGS": "-mod=mod"`) || strings.Contains(string(other), "/old") {
		t.Errorf("patched spec = %s", other)
	}
}

// TestChooseStack: pip's Jupyter in the virtual environment as a user and as root, which the README's commands use;
// Debian's where -install-jupyter asks for it as root on Debian.
func TestChooseStack(t *testing.T) {
	for _, tc := range []struct {
		venv, installJupyter, root, apt, debian bool
		want                                    stack
		why                                     string
	}{
		// The README's `go run ./kernelsetup`: as a user and as root (a container, Codespaces, CI) alike.
		{false, false, false, true, true, venvStack, "not root"},
		{false, false, true, true, true, venvStack, "root, without -install-jupyter"},
		{false, false, false, false, false, venvStack, "not root"}, // macOS as a user
		{false, false, true, false, false, venvStack, "root, without -install-jupyter"},
		// `go run ./kernelsetup -install-jupyter`: Debian's, as root on Debian only.
		{false, true, true, true, true, systemStack, "-install-jupyter, root on Debian"},
		{false, true, false, true, true, venvStack, "not root"},
		{false, true, true, false, true, venvStack, "no apt-get"},
		{false, true, true, true, false, venvStack, "not Debian"}, // apt-get on another distribution
		{true, false, true, true, true, venvStack, "-venv"},
		{true, true, true, true, true, venvStack, "-venv"},
	} {
		got, why := chooseStack(tc.venv, tc.installJupyter, tc.root, tc.apt, tc.debian)
		if got != tc.want || why != tc.why {
			t.Errorf("chooseStack(venv %v, install-jupyter %v, root %v, apt %v, debian %v) = %v, %q; want %v, %q",
				tc.venv, tc.installJupyter, tc.root, tc.apt, tc.debian, got, why, tc.want, tc.why)
		}
	}
}

// TestPlanVenv plans the venv stack: pip's Jupyter in the repository's virtual environment, the kernel registered
// there.
func TestPlanVenv(t *testing.T) {
	pinned := map[string]string{}
	for _, p := range pipPins {
		pinned[p.Name] = p.Version
	}
	ready := state{Stack: venvStack, GonbVersion: gonbVersion, GoimportsVersion: toolsVersion, GoplsVersion: goplsVersion,
		KernelArgv: wantKernelArgv(gonb, logFile), KernelPath: "/go/bin:${PATH}", Jupyter: venv + "/bin/jupyter",
		JupyterPython: venv + "/bin/python", Kernelspec: true, LogDir: true, PJRT: true, Platform: "linux/amd64",
		XLA: true, Python: "/usr/bin/python3", PythonVersion: "3.11", PythonVenvModule: true, Ensurepip: true,
		PythonPip: "23.0.1", VenvPython: true, VenvPackages: pinned}
	// A user's fresh machine: Debian's Python with python3-venv, no virtual environment yet.
	fresh := state{Stack: venvStack, Platform: "linux/amd64", XLA: true, Debian: true, HaveApt: true,
		Python: "/usr/bin/python3", PythonVersion: "3.11", PythonVenvModule: true, Ensurepip: true}
	noPython := state{Stack: venvStack, Platform: "linux/amd64", XLA: true, Debian: true, HaveApt: true}
	with := func(s state, f func(*state)) state { f(&s); return s }
	tools := []string{"install gonb v0.11.1", "install goimports v0.47.0", "install gopls v0.23.0"}
	rest := []string{"register the gonb kernel", "create GoNB's log folder", "install the PJRT CPU plugin"}
	const mkvenv, pip, apt, rootOK = "create the virtual environment", "install Jupyter with pip",
		"install python3-venv with apt-get", "let Jupyter run as root"
	asRoot := func(s state) state { s.Root = true; return s }
	concat := func(parts ...[]string) []string { return slices.Concat(parts...) }

	for _, tc := range []struct {
		name           string
		s              state
		installJupyter bool
		want           []string
	}{
		{"ready", ready, false, nil},
		{"fresh", fresh, false, concat(tools, []string{mkvenv, pip}, rest)},
		{"fresh, -install-jupyter changes nothing", fresh, true, concat(tools, []string{mkvenv, pip}, rest)},
		// As root (a container, Codespaces, CI), the same, and the environment's Jupyter may serve as root.
		{"fresh, root", asRoot(fresh), false, concat(tools, []string{mkvenv, pip, rootOK}, rest)},
		{"ready, root", with(asRoot(ready), func(s *state) { s.AllowRoot = true }), false, nil},
		{"ready, root, set up as a user", asRoot(ready), false, []string{rootOK}},
		// A user's server ignores the setting: setup neither writes it nor minds it there.
		{"ready, user, set up as root", with(ready, func(s *state) { s.AllowRoot = true }), false, nil},
		// Debian's Python without python3-venv: its own pip puts pip into an environment made without.
		{"no ensurepip, pip 23", with(fresh, func(s *state) { s.Ensurepip, s.PythonPip = false, "23.0.1" }), false,
			concat(tools, []string{mkvenv, pip}, rest)},
		// Nothing here can make the environment: the Go tools and the kernel still come, venvHelp says the rest.
		{"no ensurepip, no pip", with(fresh, func(s *state) { s.Ensurepip = false }), false, concat(tools, rest)},
		{"no ensurepip, pip 22.2", with(fresh, func(s *state) { s.Ensurepip, s.PythonPip = false, "22.2" }), false,
			concat(tools, rest)},
		{"Python 3.9", with(fresh, func(s *state) { s.PythonVersion = "3.9" }), false, concat(tools, rest)},
		{"no Python", noPython, false, concat(tools, rest)},
		// As root on Debian, apt-get installs the Python that makes it (debian:bookworm-slim, golang:1.26-bookworm).
		{"no Python, root", asRoot(noPython), false, concat(tools, []string{apt, mkvenv, pip, rootOK}, rest)},
		{"no ensurepip, no pip, root", asRoot(with(fresh, func(s *state) { s.Ensurepip = false })), false,
			concat(tools, []string{apt, mkvenv, pip, rootOK}, rest)},
		{"no Python, root, not Debian", with(noPython, func(s *state) { s.Root, s.Debian = true, false }), false,
			concat(tools, rest)},
		{"no Python, root, no apt-get", with(noPython, func(s *state) { s.Root, s.HaveApt = true, false }), false,
			concat(tools, rest)},
		// A ready environment needs no Python of the machine's.
		{"ready, no Python", with(ready, func(s *state) { s.Python, s.PythonVersion = "", "" }), false, nil},
		{"old notebook", with(ready, func(s *state) {
			s.VenvPackages = maps.Clone(pinned)
			s.VenvPackages["notebook"] = "7.5.0"
		}), false, []string{pip}},
		// The environment's python no longer runs (its Python was removed or upgraded): make it again.
		{"broken environment", with(ready, func(s *state) {
			s.VenvPython, s.VenvPackages, s.Jupyter, s.Kernelspec = false, nil, "", false
		}), false, []string{mkvenv, pip}},
		{"pins there, Jupyter broken", with(ready, func(s *state) { s.MissingModules = []string{"nbclient"} }), false,
			[]string{pip}},
		{"no kernel.json", with(ready, func(s *state) { s.KernelArgv, s.KernelPath = nil, "" }), false,
			[]string{"register the gonb kernel"}},
		{"old gonb", with(ready, func(s *state) { s.GonbVersion = "v0.10.6" }), false,
			[]string{"install gonb v0.11.1", "register the gonb kernel"}},
	} {
		if got := names(plan(tc.s, at(venvStack, pjrtFolder), tc.installJupyter)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: plan = %q, want %q", tc.name, got, tc.want)
		}
	}

	byName := func(steps []step, name string) step {
		for _, st := range steps {
			if st.Name == name {
				return st
			}
		}
		t.Fatalf("no step %q in %q", name, names(steps))
		return step{}
	}
	steps := plan(fresh, at(venvStack, pjrtFolder), false)
	sameCmds := func(a, b [][]string) bool { return slices.EqualFunc(a, b, slices.Equal[[]string]) }
	if st := byName(steps, mkvenv); !sameCmds(st.Cmds, [][]string{{"/usr/bin/python3", "-m", "venv", venv}}) {
		t.Errorf("venv step = %+v", st)
	}
	install := byName(steps, pip)
	if got := strings.Join(install.Cmds[0], " "); !strings.HasPrefix(got, venv+"/bin/python -m pip install ") ||
		!strings.Contains(got, " jupyterlab==4.6.6 ") || !strings.Contains(got, " notebook==7.6.5 ") ||
		!strings.HasSuffix(got, " jupyter_client==8.10.0") || strings.Contains(got, "--force-reinstall") {
		t.Errorf("pip step = %q", got)
	}
	if st := byName(steps, "register the gonb kernel"); st.KernelDir != venv+"/share/jupyter/kernels/gonb" ||
		!slices.Equal(st.Env, []string{"JUPYTER_DATA_DIR=" + venv + "/share/jupyter"}) ||
		!strings.HasPrefix(describe(st), "JUPYTER_DATA_DIR="+venv+"/share/jupyter "+gonb+" --install") {
		t.Errorf("kernel step = %+v (%s)", st, describe(st))
	}
	if st := byName(steps, "install the PJRT CPU plugin"); st.Python != venv+"/bin/python" {
		t.Errorf("PJRT step = %+v: pip download must try the environment's pip first", st)
	}
	withoutPip := plan(with(fresh, func(s *state) { s.Ensurepip, s.PythonPip = false, "23.0.1" }), at(venvStack, pjrtFolder), false)
	if st := byName(withoutPip, mkvenv); !sameCmds(st.Cmds, [][]string{
		{"/usr/bin/python3", "-m", "venv", "--without-pip", venv},
		{"/usr/bin/python3", "-m", "pip", "--python", venv + "/bin/python", "install", "--disable-pip-version-check", "--no-input", "pip"},
	}) {
		t.Errorf("venv step without ensurepip = %+v", st)
	}
	rootApt := plan(asRoot(noPython), at(venvStack, pjrtFolder), false)
	if st := byName(rootApt, apt); !slices.Contains(st.Cmds[1], "python3-venv") {
		t.Errorf("apt step = %+v", st)
	}
	if st := byName(rootApt, mkvenv); st.Cmds[0][0] != "/usr/bin/python3" || st.Cmds[0][2] != "venv" {
		t.Errorf("venv step after apt-get = %+v", st)
	}
	if st := byName(rootApt, rootOK); st.Kind != allowRoot || st.Path != venv+"/etc/jupyter/jupyter_server_config.json" {
		t.Errorf("allow-root step = %+v (%s)", st, describe(st))
	}
	repair := plan(with(ready, func(s *state) { s.MissingModules = []string{"nbclient"} }), at(venvStack, pjrtFolder), false)
	if !slices.Contains(repair[0].Cmds[0], "--force-reinstall") {
		t.Errorf("repair step = %+v", repair[0])
	}
}

func TestVersionAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v, least string
		want     bool
	}{
		{"3.11", "3.10", true}, {"3.10", "3.10", true}, {"3.9", "3.10", false}, {"4.0", "3.10", true},
		{"23.0.1", "22.3", true}, {"22.3", "22.3", true}, {"22.2.2", "22.3", false}, {"22.3b1", "22.3", true},
		{"26.3", "22.3", true}, {"", "3.10", false},
	} {
		if got := versionAtLeast(tc.v, tc.least); got != tc.want {
			t.Errorf("versionAtLeast(%q, %q) = %v, want %v", tc.v, tc.least, got, tc.want)
		}
	}
}

func TestJupyterHelp(t *testing.T) {
	for _, tc := range []struct {
		s    state
		want []string
	}{
		{state{HaveApt: true}, []string{"jupyter not found", "-install-jupyter", "jupyter-nbconvert",
			"`go run ./kernelsetup` (pip's", ".venv"}},
		{state{Jupyter: "/usr/bin/jupyter"}, []string{"kernelspec", "`go run ./kernelsetup` (pip's"}},
		{state{Jupyter: "j", Kernelspec: true, JupyterPython: "/usr/bin/python3", MissingModules: []string{"nbclient"},
			HaveApt: true}, []string{"/usr/bin/python3 cannot import nbclient", "python3-nbclient"}},
		{state{Stack: venvStack, Jupyter: "/repo/.venv/bin/jupyter", Kernelspec: true, JupyterPython: "/repo/.venv/bin/python",
			MissingModules: []string{"nbclient"}}, []string{"/repo/.venv/bin/python cannot import nbclient", "rerun `go run ./kernelsetup`"}},
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

func TestVenvHelp(t *testing.T) {
	py := state{Stack: venvStack, Python: "/usr/bin/python3", PythonVersion: "3.11", PythonVenvModule: true}
	for _, tc := range []struct {
		s    state
		want string
	}{
		{state{Stack: venvStack}, "no python3 found"},
		{state{Stack: venvStack, Python: "/usr/bin/python3", PythonVersion: "3.9"}, "is Python 3.9; Jupyter's pinned packages need 3.10"},
		{state{Stack: venvStack, Python: "/usr/bin/python3", PythonVersion: "3.11"}, "has no venv module"},
		{py, "cannot put pip into a virtual environment"},
	} {
		msg := venvHelp(tc.s)
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "python3-venv") || strings.Contains(msg, "\n") {
			t.Errorf("venvHelp(%+v) = %q, want one line with %q and python3-venv", tc.s, msg, tc.want)
		}
	}
}

func TestListedKernelDir(t *testing.T) {
	list := "Available kernels:\n  gonb       /repo/.venv/share/jupyter/kernels/gonb\n" +
		"  python3    /repo/.venv/share/jupyter/kernels/python3\n"
	if got := listedKernelDir(list, "gonb"); got != "/repo/.venv/share/jupyter/kernels/gonb" {
		t.Errorf("gonb: %q", got)
	}
	if got := listedKernelDir(list, "go"); got != "" {
		t.Errorf("go: %q, want none", got)
	}
	if got := listedKernelDir("  gonb    /home/a b/.local/share/jupyter/kernels/gonb\n", "gonb"); got != "/home/a b/.local/share/jupyter/kernels/gonb" {
		t.Errorf("a folder with a space: %q", got)
	}
}

// TestAllowRootConfig: as root, setup sets ServerApp.allow_root in the environment's Jupyter server configuration
// and keeps whatever else is there.
func TestAllowRootConfig(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"none", "", `{"ServerApp":{"allow_root":true}}`},
		{"other settings", `{"ServerApp": {"port": 9999}, "LabApp": {"x": 1}}`,
			`{"LabApp":{"x":1},"ServerApp":{"allow_root":true,"port":9999}}`},
		{"false", `{"ServerApp": {"allow_root": false}}`, `{"ServerApp":{"allow_root":true}}`},
		{"not JSON", `c.ServerApp.allow_root = True`, ""},
	} {
		if allowsRoot([]byte(tc.in)) {
			t.Errorf("%s: allowsRoot(%s) before", tc.name, tc.in)
		}
		out, err := allowRootConfig([]byte(tc.in))
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			continue
		}
		var compact bytes.Buffer
		if err != nil || json.Compact(&compact, out) != nil || compact.String() != tc.want || !allowsRoot(out) {
			t.Errorf("%s: allowRootConfig = %s (%v), want %s", tc.name, out, err, tc.want)
		}
	}
}
