package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// stack is the Jupyter that setup installs or checks, and where it registers the GoNB kernel.
type stack int

const (
	// systemStack is Debian's Jupyter, installed with apt-get where it is missing (-install-jupyter, as root on
	// Debian); the kernel is registered in the user's Jupyter data folder.
	systemStack stack = iota
	// venvStack is pip's JupyterLab and Notebook in the repository's virtual environment (setup.VenvDir), as a user
	// or as root; the kernel is registered in the environment's share/jupyter, which only its Jupyter reads.
	venvStack
)

// chooseStack returns the stack to set up and why: Debian's Jupyter where -install-jupyter asks for it and apt-get
// is the way to install it (as root, with apt-get, on Debian or a derivative), else the virtual environment, which
// the README's commands use as a user and as root alike (-venv asks for it whatever the rest).
func chooseStack(venv, installJupyter, root, haveApt, debian bool) (stack, string) {
	switch {
	case venv:
		return venvStack, "-venv"
	case !root:
		return venvStack, "not root"
	case !installJupyter:
		return venvStack, "root, without -install-jupyter"
	case !haveApt:
		return venvStack, "no apt-get"
	case !debian:
		return venvStack, "not Debian"
	}
	return systemStack, "-install-jupyter, root on Debian"
}

// pin is a Python distribution at an exact version.
type pin struct{ Name, Version string }

func (p pin) String() string { return p.Name + "==" + p.Version }

// pipPins are what the venv stack installs with pip: JupyterLab 4 and Notebook 7 to read the notebooks in,
// nbclient, nbconvert and jupyter_client for the test harness, and ipykernel (a Python kernel beside GoNB).
// Their dependencies are whatever pip resolves for them. ipykernel 7.3.0 is the last release that runs on Python
// 3.10 (7.4 needs 3.11); the others need 3.10 (minPython).
var pipPins = []pin{
	{"jupyterlab", "4.6.6"},
	{"notebook", "7.6.5"},
	{"nbclient", "0.11.0"},
	{"nbconvert", "7.17.2"},
	{"ipykernel", "7.3.0"},
	{"jupyter_client", "8.10.0"},
}

// minPython is the oldest Python that every pin in pipPins supports.
const minPython = "3.10"

// minPipForPython is the oldest pip with --python, which installs into another environment: a Python without
// ensurepip (Debian's without python3-venv) makes the virtual environment without pip and its own pip puts one in.
const minPipForPython = "22.3"

// pythonCandidates are the interpreters tried, in order, to make the virtual environment.
var pythonCandidates = []string{"python3", "/usr/bin/python3"}

// venvPython returns the interpreter of the virtual environment venv.
func venvPython(venv string) string { return filepath.Join(venv, "bin", "python") }

// venvDataDir returns the Jupyter data folder of the virtual environment venv, where its Jupyter looks for kernels
// (and, in an environment its user owns, looks there first, before the user's own folder).
func venvDataDir(venv string) string { return filepath.Join(venv, "share", "jupyter") }

// pinsMissing returns the pins whose installed version (in installed, by name) differs.
func pinsMissing(installed map[string]string) []pin {
	var missing []pin
	for _, p := range pipPins {
		if installed[p.Name] != p.Version {
			missing = append(missing, p)
		}
	}
	return missing
}

// canMakeVenv reports whether s.Python can make a virtual environment with pip in it: it is at least minPython,
// has the venv module, and has ensurepip or a pip recent enough to install one (minPipForPython).
func (s state) canMakeVenv() bool {
	return s.Python != "" && versionAtLeast(s.PythonVersion, minPython) && s.PythonVenvModule &&
		(s.Ensurepip || versionAtLeast(s.PythonPip, minPipForPython))
}

// venvSteps returns the steps that make the virtual environment venv and install pipPins into it, given what the
// probe found; as root on Debian, apt-get installs python3-venv where no Python here can make the environment, and
// the environment's Jupyter server is allowed to run as root (allowRootFile: `jupyter lab` refuses to start as root
// without it). When no step can help, it returns none and venvHelp says what to do.
func venvSteps(s state, venv string) []step {
	var steps []step
	python := s.Python
	if !s.VenvPython && !s.canMakeVenv() {
		if !s.Root || !s.HaveApt || !s.Debian {
			return nil
		}
		steps = append(steps, aptStep("install python3-venv with apt-get", "python3", "python3-venv"))
		python = "/usr/bin/python3"
		s.Ensurepip = true
	}
	if !s.VenvPython {
		st := step{Name: "create the virtual environment", Kind: runCmds}
		if s.Ensurepip {
			st.Cmds = [][]string{{python, "-m", "venv", venv}}
		} else {
			st.Cmds = [][]string{
				{python, "-m", "venv", "--without-pip", venv},
				{python, "-m", "pip", "--python", venvPython(venv), "install", "--disable-pip-version-check",
					"--no-input", "pip"},
			}
		}
		steps = append(steps, st)
	}
	if missing := pinsMissing(s.VenvPackages); !s.VenvPython || len(missing) > 0 || !s.jupyterOK() {
		install := []string{venvPython(venv), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
			"--progress-bar", "off"}
		if s.VenvPython && len(missing) == 0 {
			install = append(install, "--force-reinstall") // all there, yet Jupyter does not work: repair it
		}
		for _, p := range pipPins {
			install = append(install, p.String())
		}
		steps = append(steps, step{Name: "install Jupyter with pip", Kind: runCmds, Cmds: [][]string{install}})
	}
	if s.Root && !s.AllowRoot {
		steps = append(steps, step{Name: "let Jupyter run as root", Kind: allowRoot, Path: allowRootFile(venv)})
	}
	return steps
}

// allowRootFile is the Jupyter server configuration of the virtual environment venv, which every Jupyter server
// of the environment reads (JupyterLab 4 and Notebook 7), and no other Jupyter does. As root, setup sets its
// ServerApp.allow_root (allowRootConfig): without it, `jupyter lab` refuses to start as root. The setting changes
// nothing for a server that does not run as root.
func allowRootFile(venv string) string {
	return filepath.Join(venv, "etc", "jupyter", "jupyter_server_config.json")
}

// allowsRoot reports whether the Jupyter server configuration data (JSON) sets ServerApp.allow_root.
func allowsRoot(data []byte) bool {
	var config struct {
		ServerApp struct {
			AllowRoot bool `json:"allow_root"`
		}
	}
	return json.Unmarshal(data, &config) == nil && config.ServerApp.AllowRoot
}

// allowRootConfig returns the Jupyter server configuration data (JSON; empty: none) with ServerApp.allow_root set
// and its other settings as they were. It fails where data is not a JSON object of objects.
func allowRootConfig(data []byte) ([]byte, error) {
	config := map[string]map[string]any{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &config); err != nil {
			return nil, err
		}
	}
	if config["ServerApp"] == nil {
		config["ServerApp"] = map[string]any{}
	}
	config["ServerApp"]["allow_root"] = true
	out, err := json.MarshalIndent(config, "", "  ")
	return append(out, '\n'), err
}

// venvHelp is what to print when no Python here can make the virtual environment and setup may not install one.
func venvHelp(s state) string {
	var what string
	switch {
	case s.Python == "":
		what = "no python3 found"
	case !versionAtLeast(s.PythonVersion, minPython):
		what = fmt.Sprintf("%s is Python %s; Jupyter's pinned packages need %s or later", s.Python, s.PythonVersion,
			minPython)
	case !s.PythonVenvModule:
		what = s.Python + " has no venv module"
	default:
		what = s.Python + " cannot put pip into a virtual environment (no ensurepip, and no pip " + minPipForPython +
			" or later)"
	}
	return what + ": install Python " + minPython + " or later with venv (Debian/Ubuntu: `apt-get install -y " +
		"python3 python3-venv` as root, or run `go run ./kernelsetup` as root, which installs them), then rerun " +
		"`go run ./kernelsetup`"
}

// pythonInfo is what probing an interpreter found.
type pythonInfo struct {
	Executable string `json:"executable"` // the interpreter itself (a pyenv shim's target, say)
	Version    string `json:"version"`    // "3.11"
	Venv       bool   `json:"venv"`       // the venv module is there
	Ensurepip  bool   `json:"ensurepip"`  // ensurepip is there (Debian ships it in python3-venv)
	Pip        string `json:"-"`          // the version of its pip ("" none)
}

const pythonProbe = `import importlib.util as u, json, sys
print(json.dumps({"executable": sys.executable, "version": "%d.%d" % sys.version_info[:2],
                  "venv": u.find_spec("venv") is not None,
                  "ensurepip": u.find_spec("ensurepip") is not None}))`

// probePython returns what python offers for making a virtual environment; ok is false when it does not run.
func probePython(python string) (info pythonInfo, ok bool) {
	out, err := exec.Command(python, "-c", pythonProbe).Output()
	if err != nil || json.Unmarshal(out, &info) != nil || info.Executable == "" {
		return pythonInfo{}, false
	}
	if out, err := exec.Command(python, "-m", "pip", "--version").Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) >= 2 && f[0] == "pip" {
			info.Pip = f[1]
		}
	}
	return info, true
}

// probeBasePython sets s's Python fields to the first of pythonCandidates that can make the virtual environment,
// else to the first that runs (so that venvHelp can say what it lacks). s.Python is the interpreter itself, not
// a shim or link that may later lead elsewhere.
func probeBasePython(s *state) {
	first := true
	for _, name := range pythonCandidates {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		info, ok := probePython(path)
		if !ok {
			continue
		}
		c := *s
		c.Python, c.PythonVersion, c.PythonVenvModule, c.Ensurepip, c.PythonPip = info.Executable, info.Version,
			info.Venv, info.Ensurepip, info.Pip
		if first || c.canMakeVenv() {
			*s, first = c, false
		}
		if c.canMakeVenv() {
			return
		}
	}
}

const packagesProbe = `import importlib.metadata as m, json, sys
v = {}
for n in sys.argv[1:]:
    try:
        v[n] = m.version(n)
    except m.PackageNotFoundError:
        v[n] = ""
print(json.dumps(v))`

// probeVenv sets s's VenvPython and VenvPackages for the virtual environment venv.
func probeVenv(s *state, venv string) {
	args := []string{"-c", packagesProbe}
	for _, p := range pipPins {
		args = append(args, p.Name)
	}
	out, err := exec.Command(venvPython(venv), args...).Output()
	if err != nil {
		return
	}
	s.VenvPython = json.Unmarshal(out, &s.VenvPackages) == nil
}

// isDebian reports whether this machine runs Debian or a derivative (Ubuntu included).
func isDebian() bool {
	_, err := os.Stat("/etc/debian_version")
	return err == nil
}

// versionAtLeast reports whether the dotted version v is at least least, comparing numeric fields in order (a
// missing field counts as 0, a field's non-numeric tail is ignored: "23.0.1" ≥ "22.3", "3.10" ≥ "3.9"). An
// empty v is never at least least.
func versionAtLeast(v, least string) bool {
	if v == "" {
		return false
	}
	a, b := strings.Split(v, "."), strings.Split(least, ".")
	for i := range max(len(a), len(b)) {
		if x, y := versionField(a, i), versionField(b, i); x != y {
			return x > y
		}
	}
	return true
}

// versionField returns the leading number of fields[i], 0 when there is none.
func versionField(fields []string, i int) int {
	if i >= len(fields) {
		return 0
	}
	f := fields[i]
	end := 0
	for end < len(f) && f[end] >= '0' && f[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(f[:end])
	return n
}
