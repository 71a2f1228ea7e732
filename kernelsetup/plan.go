package main

import (
	"bufio"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/internal/setup"
)

// Pinned versions. GoNB v0.11.1 is the only version the module proxy serves; gopls v0.24 needs Go 1.27;
// golang.org/x/tools v0.47.0 is the release gopls v0.23.0 is built against and needs only Go 1.25.
const (
	gonbModule     = "github.com/janpfeifer/gonb"
	gonbVersion    = "v0.11.1"
	toolsModule    = "golang.org/x/tools"
	toolsVersion   = "v0.47.0"
	goplsModule    = "golang.org/x/tools/gopls"
	goplsVersion   = "v0.23.0"
	goimportsPkg   = "golang.org/x/tools/cmd/goimports"
	aptPackages    = "jupyter-notebook python3-nbclient jupyter-nbconvert python3-ipykernel jupyter-client"
	aptLockTimeout = "DPkg::Lock::Timeout=600"
	wrapperModule  = "kernelsetup.invalid/gonbwrapper"
)

// pythonModules are the modules the harness needs from the Python that owns jupyter.
var pythonModules = []string{"nbconvert", "nbclient", "jupyter_client"}

// state is what probing the machine found. Empty strings mean "absent".
type state struct {
	Stack            stack    // the Jupyter being set up, which the Jupyter and kernel fields describe
	GonbVersion      string   // module version recorded in the gonb binary
	GoimportsVersion string   // golang.org/x/tools version recorded in goimports
	GoplsVersion     string   // gopls module version
	KernelArgv       []string // argv of the gonb kernel.json in the stack's kernel folder; nil if none
	Jupyter          string   // path of the jupyter command (venvStack: the virtual environment's, if there)
	JupyterPython    string   // interpreter named in jupyter's shebang
	Kernelspec       bool     // `jupyter kernelspec list` works
	MissingModules   []string // of pythonModules, those the jupyter python cannot import
	HaveApt          bool     // apt-get is available
	Root             bool     // running as root
	Debian           bool     // the machine runs Debian or a derivative
	KernelPath       string   // PATH in the env of the registered gonb kernel.json; "" if none
	LogDir           bool     // the folder of GoNB's log file exists (the kernel exits at start without it)
	PJRT             bool     // a PJRT CPU plugin is installed (pjrtInstalled)
	Platform         string   // GOOS/GOARCH of this machine
	XLA              bool     // GoMLX's XLA backend is compiled in on this platform (pjrt.XLACompiledIn)

	// The venv stack's (venv.go): the Python that makes the virtual environment, and what the environment holds.
	Python           string            // the interpreter (probeBasePython); "" none runs
	PythonVersion    string            // its version, "3.11"
	PythonVenvModule bool              // it has the venv module
	Ensurepip        bool              // it has ensurepip, so `-m venv` puts pip into the environment
	PythonPip        string            // the version of its own pip; "" none
	VenvPython       bool              // the virtual environment's python runs
	VenvPackages     map[string]string // the installed versions of pipPins' packages there, by name ("" absent)
	AllowRoot        bool              // the environment's Jupyter server may run as root (allowRootFile, allowsRoot)
}

// jupyterOK reports whether Jupyter is complete enough for the harness.
func (s state) jupyterOK() bool {
	return s.Jupyter != "" && s.Kernelspec && len(s.MissingModules) == 0
}

// stepKind says how a step is carried out.
type stepKind int

const (
	runCmds       stepKind = iota // run Cmds in order in the current directory
	runInTmpMod                   // run Cmds in order inside a fresh temporary directory
	writeKernel                   // run Cmds (gonb --install), then set kernel.json's argv and PATH (patchKernel)
	patchKernel                   // set the argv and the env's PATH of the registered kernel.json
	makeDir                       // create the folder Path
	installPlugin                 // install the PJRT CPU plugin into the folder Path from the first of Sources that works
	allowRoot                     // set ServerApp.allow_root in the Jupyter server configuration file Path
)

// step is one planned action: a one-line description and the commands that carry it out.
type step struct {
	Name string
	Kind stepKind
	Cmds [][]string
	Env  []string // extra environment, KEY=VALUE
	Path string   // the folder of makeDir and installPlugin; the gonb binary of patchKernel; allowRoot's file
	// KernelDir is the folder of the kernel spec that writeKernel and patchKernel write; writeKernel's Env
	// carries the Jupyter data folder above it for `gonb --install`.
	KernelDir string
	// Python is the virtual environment's interpreter, whose pip installPlugin tries first; "" none.
	Python string
	// Sources are where installPlugin gets the plugin, tried in order (pjrt.go). Its failure never fails the
	// setup: the models then run on the pure-Go backend.
	Sources []pluginSource
}

// wantKernelArgv is the argv the registered kernel must have: raw text errors (so compile errors carry the
// compiler's message) and logs to a file instead of stderr (errors still reach stderr).
func wantKernelArgv(gonbPath, logFile string) []string {
	return []string{gonbPath, "--kernel", "{connection_file}", "--raw_error", "--logtostderr=false",
		"--log_file=" + logFile}
}

// wantKernelPath is the PATH the registered kernel must run with: Go's bin folder, where gonb, goimports and
// gopls are, before the PATH of the Jupyter that starts it (jupyter_client substitutes ${PATH} in a kernelspec's
// env). Without it, a Jupyter started without that folder on its PATH runs the kernel, which then reports
// "goimports is not installed".
func wantKernelPath(gobin string) string {
	return gobin + string(filepath.ListSeparator) + "${PATH}"
}

// plan returns the steps that bring the machine from s to the wanted setup in loc, skipping what is already
// present. loc.pjrtDir is where the PJRT CPU plugin goes ("": no plugin, -no-xla). On the system stack
// installJupyter asks for Jupyter to be installed with apt-get when it is missing; on the venv stack Jupyter is
// always installed with pip, and as root on Debian apt-get installs python3-venv where no Python can make the
// environment, which is then allowed to serve as root (venvSteps). The Go tools come first and the kernel next, so that a machine where Jupyter cannot be installed
// still gets them; on the venv stack the environment comes before the kernel registered in it. The optional PJRT
// plugin comes last, so that nothing else depends on it (its failure is reported, not fatal). The plugin is planned
// only where GoMLX compiles its XLA backend in (s.XLA) and a source serves this platform (pluginSources).
func plan(s state, loc locations, installJupyter bool) []step {
	var steps []step
	if s.GonbVersion != gonbVersion {
		// `go install module@version` fails for gonb (the proxy refuses the version list it consults), so build
		// it from a throwaway module that requires the exact version.
		steps = append(steps, step{
			Name: "install gonb " + gonbVersion,
			Kind: runInTmpMod,
			Env:  []string{"GOWORK=off", "GOFLAGS=-mod=mod"},
			Cmds: [][]string{
				{"go", "mod", "init", wrapperModule},
				{"go", "get", gonbModule + "@" + gonbVersion},
				{"go", "install", gonbModule},
			},
		})
	}
	if s.GoimportsVersion != toolsVersion {
		steps = append(steps, step{Name: "install goimports " + toolsVersion, Kind: runCmds, Env: []string{"GOWORK=off"},
			Cmds: [][]string{{"go", "install", goimportsPkg + "@" + toolsVersion}}})
	}
	if s.GoplsVersion != goplsVersion {
		steps = append(steps, step{Name: "install gopls " + goplsVersion, Kind: runCmds, Env: []string{"GOWORK=off"},
			Cmds: [][]string{{"go", "install", goplsModule + "@" + goplsVersion}}})
	}
	toolsChanged := len(steps) > 0
	var dataEnv []string // where `gonb --install` writes: JUPYTER_DATA_DIR, else the user's data folder
	if s.Stack == venvStack {
		steps = append(steps, venvSteps(s, loc.venv)...)
		dataEnv = []string{"JUPYTER_DATA_DIR=" + loc.dataDir}
	}
	switch {
	case toolsChanged || s.KernelArgv == nil:
		steps = append(steps, step{Name: "register the gonb kernel", Kind: writeKernel, Env: dataEnv,
			KernelDir: loc.kernelDir(), Cmds: [][]string{{loc.gonbPath, "--install", "--raw_error"}}})
	case !slices.Equal(s.KernelArgv, wantKernelArgv(loc.gonbPath, loc.logFile)) ||
		s.KernelPath != wantKernelPath(filepath.Dir(loc.gonbPath)):
		steps = append(steps, step{Name: "set the gonb kernel's argv and PATH", Kind: patchKernel,
			Path: loc.gonbPath, KernelDir: loc.kernelDir()})
	}
	if !s.LogDir {
		steps = append(steps, step{Name: "create GoNB's log folder", Kind: makeDir, Path: filepath.Dir(loc.logFile)})
	}
	// Without apt-get, jupyterHelp tells what to do.
	if s.Stack == systemStack && !s.jupyterOK() && installJupyter && s.HaveApt {
		steps = append(steps, aptStep("install Jupyter with apt-get", strings.Fields(aptPackages)...))
	}
	if sources := pluginSources(s.Platform); loc.pjrtDir != "" && !s.PJRT && s.XLA && len(sources) > 0 {
		st := step{Name: "install the PJRT CPU plugin", Kind: installPlugin, Path: loc.pjrtDir, Sources: sources}
		if s.Stack == venvStack {
			st.Python = venvPython(loc.venv)
		}
		steps = append(steps, st)
	}
	return steps
}

// aptStep returns a step that installs packages with apt-get, waiting for apt's lock rather than failing on it.
func aptStep(name string, packages ...string) step {
	return step{
		Name: name,
		Kind: runCmds,
		Env:  []string{"DEBIAN_FRONTEND=noninteractive"},
		Cmds: [][]string{
			{"apt-get", "-o", aptLockTimeout, "update"},
			append([]string{"apt-get", "install", "-y", "--no-install-recommends", "-o", aptLockTimeout},
				packages...),
		},
	}
}

// jupyterHelp is what to print when Jupyter is missing or incomplete and was not (or could not be) installed.
func jupyterHelp(s state) string {
	var what string
	switch {
	case s.Jupyter == "":
		what = "jupyter not found"
	case !s.Kernelspec:
		what = "`" + s.Jupyter + " kernelspec` does not work (jupyter_client missing?)"
	default:
		what = s.JupyterPython + " cannot import " + strings.Join(s.MissingModules, ", ")
	}
	if s.Stack == venvStack {
		return what + ": rerun `go run ./kernelsetup` to install Jupyter with pip into " + setup.VenvDir
	}
	return what + ": run `go run ./kernelsetup -install-jupyter` (Debian's Jupyter: apt-get install -y " + aptPackages +
		") or `go run ./kernelsetup` (pip's Jupyter in " + setup.VenvDir + ")"
}

// moduleVersion returns the version of module mod recorded in the output of `go version -m BINARY`, looking at the
// main module ("mod" line) and the dependencies ("dep" lines, possibly replaced by a "=>" line). "" if absent.
func moduleVersion(goVersionM, mod string) string {
	sc := bufio.NewScanner(strings.NewReader(goVersionM))
	version := ""
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "mod", "dep":
			if f[1] == mod && len(f) >= 3 {
				version = f[2]
			} else if version != "" {
				return version
			}
		case "=>":
			if version != "" && len(f) >= 3 {
				return f[2]
			}
		}
	}
	return version
}
