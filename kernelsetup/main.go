// Command kernelsetup makes a machine ready to run the chapter's notebooks: it installs GoNB v0.11.1, goimports and
// gopls into Go's bin folder ($(go env GOBIN), else the bin folder of the first GOPATH entry), sets up Jupyter and
// registers the GoNB kernel with it (logging to a file in the user cache folder, with Go's bin folder on the
// kernel's PATH), and, last, installs the PJRT CPU plugin of GoMLX's XLA backend into pjrt.Dir (on Linux
// x86-64 from a PyPI wheel with `pip download`, checked against its SHA-256, else, or when that fails, with go-xla's
// installer; see pjrt.go). The plugin is optional: where it cannot be installed, setup says so in one line and the
// models run on the pure-Go backend.
//
// Jupyter comes one of two ways (chooseStack, venv.go). By default, as a user and as root alike, setup makes a
// virtual environment in the repository's .venv with `python3 -m venv`, installs pinned JupyterLab 4, Notebook 7,
// nbclient, nbconvert, ipykernel and jupyter_client into it with pip, and registers the kernel in
// .venv/share/jupyter, which only that Jupyter reads; the notebook harness prefers .venv/bin/jupyter when it is
// there. As root it lets that Jupyter serve as root (which `jupyter lab` refuses without --allow-root), and on
// Debian installs python3-venv with apt-get where no Python here can make the environment. With -install-jupyter,
// as root on Debian, it sets up Debian's Jupyter instead (installed with apt-get when it is missing) and registers
// the kernel in the user's Jupyter data folder.
//
//	go run ./kernelsetup                  # install the Go tools and the PJRT plugin, set up Jupyter, register the kernel
//	go run ./kernelsetup -install-jupyter # as root on Debian: Debian's Jupyter, installed with apt-get when it is missing
//	go run ./kernelsetup -no-xla          # no PJRT plugin: models run on the pure-Go backend
//	go run ./kernelsetup -n               # print what would be done
//
// It is idempotent: what is present at the right version is skipped. A failure exits non-zero with a message on
// stderr: one line, followed by the last lines of the failing command's output when a command failed.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/internal/pjrt"
	"github.com/agentrl-go/agentrl/internal/setup"
)

func main() {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: go run ./kernelsetup [flags]

Makes this machine ready to run the chapter's notebooks: installs GoNB `+gonbVersion+`, goimports and gopls into
Go's bin folder, sets up Jupyter and registers the GoNB kernel with it (with Go's bin folder on the kernel's PATH),
and installs XLA's PJRT CPU plugin, which runs the models about ten times faster than the pure-Go backend (on
Linux x86-64 from a pinned PyPI wheel, else with GoMLX's installer; where neither works, the models run on the
pure-Go backend). Running it again only checks and repairs.

Jupyter: pinned JupyterLab 4 and Notebook 7 (with nbclient, nbconvert, ipykernel, jupyter_client) are installed
with pip into the repository's .venv (Python `+minPython+` or later, no root needed), and the kernel is registered
there. As root, that Jupyter may serve as root, and on Debian apt-get installs python3-venv where it is needed.
With -install-jupyter, as root on Debian, Debian's Jupyter is set up instead (apt-get installs it when missing).

Flags:
`)
		flag.PrintDefaults()
	}
	venv := flag.Bool("venv", false, "install Jupyter with pip into the repository's "+setup.VenvDir+
		" (the default; with -install-jupyter, instead of Debian's)")
	installJupyter := flag.Bool("install-jupyter", false,
		"as root on Debian: set up Debian's Jupyter, installed with apt-get when it is missing (packages: "+
			aptPackages+")")
	dryRun := flag.Bool("n", false, "print the planned steps and exit")
	noXLA := flag.Bool("no-xla", false, "do not install the PJRT CPU plugin of the XLA backend")
	flag.Parse()
	if err := run(*venv, *installJupyter, *dryRun, !*noXLA); err != nil {
		fmt.Fprintln(os.Stderr, "kernelsetup:", err)
		os.Exit(1)
	}
}

// run sets the machine up: it chooses the Jupyter stack (venv asks for the virtual environment), installs or
// repairs what the probe finds missing, then checks the result and prints one line per component. With dryRun it
// only prints the planned steps. With xla false (-no-xla) it does not install the PJRT plugin, but says at the end
// whether one is there.
func run(venv, installJupyter, dryRun, xla bool) error {
	_, err := exec.LookPath("apt-get")
	st, why := chooseStack(venv, installJupyter, os.Geteuid() == 0, err == nil, isDebian())
	loc, err := locate(xla, st)
	if err != nil {
		return err
	}
	s := probe(loc)
	steps := plan(s, loc, installJupyter)
	fmt.Println(stackLine(loc, why))
	if dryRun {
		return printPlan(s, steps, installJupyter)
	}
	reportReady(s, loc.pjrtDir)
	if err := runSteps(steps, loc.logFile); err != nil {
		return err
	}
	if s, err = verify(loc); err != nil {
		return err
	}
	if !xla { // -no-xla: say whether a plugin is there all the same
		loc.pjrtDir = pjrt.Dir()
		s.PJRT = loc.pjrtDir != "" && pjrtInstalled(loc.pjrtDir)
	}
	fmt.Println(pjrtHint(s, loc.pjrtDir, xla))
	fmt.Printf("ready; GoNB logs go to %s\n", loc.logFile)
	return nil
}

// stackLine is the line that says which Jupyter setup sets up and why.
func stackLine(loc locations, why string) string {
	if loc.stack == venvStack {
		return fmt.Sprintf("Jupyter: pip's JupyterLab %s and Notebook %s in %s (%s)", pipPins[0].Version,
			pipPins[1].Version, loc.venv, why)
	}
	return "Jupyter: this machine's (" + why + "; without -install-jupyter, pip's in " + setup.VenvDir + ")"
}

// locations are where setup installs and logs.
type locations struct {
	stack    stack
	gobin    string // Go's bin folder, where `go install` puts gonb, goimports and gopls
	gonbPath string // the gonb binary in gobin
	logFile  string // GoNB's log file, in the user cache folder
	pjrtDir  string // the PJRT CPU plugin's folder; "" when it is not wanted or there is no home folder
	venv     string // the virtual environment of the venv stack, setup.VenvDir in the repository; "" otherwise
	dataDir  string // the Jupyter data folder the kernel is registered in
}

// kernelDir is the folder of the GoNB kernel spec.
func (l locations) kernelDir() string { return filepath.Join(l.dataDir, "kernels", "gonb") }

// locate returns the locations for this machine and stack (with pjrtDir "" unless xla) and puts Go's bin folder
// first on this process's PATH, for the tools that `gonb --install` runs. It fails when Go's bin folder or the
// user cache folder cannot be found, and on the venv stack outside the repository.
func locate(xla bool, st stack) (locations, error) {
	gobin, err := setup.GoBin()
	if err != nil {
		return locations{}, err
	}
	// The tools run by `gonb --install` must be found on PATH (the kernel gets it from kernel.json's env).
	os.Setenv("PATH", gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		return locations{}, fmt.Errorf("no user cache directory for GoNB's log: %w", err)
	}
	loc := locations{
		stack:    st,
		gobin:    gobin,
		gonbPath: filepath.Join(gobin, "gonb"),
		logFile:  filepath.Join(cacheDir, "gonb", "gonb.log"),
		dataDir:  userDataDir(),
	}
	if st == venvStack {
		root, err := setup.RepoRoot()
		if err != nil {
			return locations{}, err
		}
		loc.venv = filepath.Join(root, setup.VenvDir)
		loc.dataDir = venvDataDir(loc.venv)
	}
	if xla {
		loc.pjrtDir = pjrt.Dir() // "" (no home folder): pjrtHint says so at the end
	}
	return loc, nil
}

// printPlan prints one line per planned step, or "nothing to do" when there is none. It returns what to do as
// the error when no step can set Jupyter up: on the system stack, Jupyter is incomplete and installJupyter is
// false; on the venv stack, no Python here can make the virtual environment.
func printPlan(s state, steps []step, installJupyter bool) error {
	for _, st := range steps {
		fmt.Printf("would %s: %s\n", st.Name, describe(st))
	}
	switch {
	case s.Stack == systemStack && !s.jupyterOK() && !installJupyter:
		return errors.New(jupyterHelp(s))
	case s.Stack == venvStack && !s.VenvPython && !s.canMakeVenv() &&
		!slices.ContainsFunc(steps, func(st step) bool { return st.Cmds != nil && st.Cmds[0][0] == "apt-get" }):
		return errors.New(venvHelp(s))
	}
	if len(steps) == 0 {
		fmt.Println("nothing to do")
	}
	return nil
}

// reportReady prints one line for each Go tool at its pinned version, and for the PJRT plugin when it is wanted
// (pjrtDir is not "") and installed.
func reportReady(s state, pjrtDir string) {
	report(s.GonbVersion == gonbVersion, "gonb "+gonbVersion)
	report(s.GoimportsVersion == toolsVersion, "goimports "+toolsVersion)
	report(s.GoplsVersion == goplsVersion, "gopls "+goplsVersion)
	report(pjrtDir != "" && s.PJRT, "PJRT CPU plugin")
}

// runSteps carries out the steps in order, printing one line with its time for each. It stops at the first step
// that fails and returns its error, prefixed with the step's name; a failure of the optional PJRT plugin is
// printed instead and the steps go on.
func runSteps(steps []step, logFile string) error {
	for _, st := range steps {
		if st.Kind == installPlugin {
			installOptionalPlugin(st)
			continue
		}
		start := time.Now()
		if err := execute(st, logFile); err != nil {
			return fmt.Errorf("%s: %w", st.Name, err)
		}
		fmt.Printf("%-32s done (%.1fs)\n", st.Name, time.Since(start).Seconds())
	}
	return nil
}

// installOptionalPlugin carries out an installPlugin step, trying its sources in order, and prints one line:
// done, with the time and the source that worked, or failed, with the error (the models then run on the pure-Go
// backend).
func installOptionalPlugin(st step) {
	start := time.Now()
	if src, err := tryPluginSources(st.Path, st.Sources, st.installFrom); err != nil {
		fmt.Printf("%-32s failed, models run on the pure-Go backend: %s\n", st.Name, err)
	} else {
		fmt.Printf("%-32s done (%.1fs, %s)\n", st.Name, time.Since(start).Seconds(), src)
	}
}

// verify probes the machine again after the steps and returns the new state. It fails unless the Go tools are at
// their pinned versions, the kernel spec is the one written, and Jupyter (which may have just been installed; on
// the venv stack, with the pinned packages) is complete and lists the kernel; it prints a line for the kernel and
// one for Jupyter as each checks out.
func verify(loc locations) (state, error) {
	s := probe(loc)
	if s.GonbVersion != gonbVersion || s.GoimportsVersion != toolsVersion || s.GoplsVersion != goplsVersion {
		return s, fmt.Errorf("after installing, %s has gonb %q, goimports %q, gopls %q (is GOBIN writable?)",
			loc.gobin, s.GonbVersion, s.GoimportsVersion, s.GoplsVersion)
	}
	wantArgv := wantKernelArgv(loc.gonbPath, loc.logFile)
	if !slices.Equal(s.KernelArgv, wantArgv) || s.KernelPath != wantKernelPath(loc.gobin) {
		return s, fmt.Errorf("kernel spec in %s is not the one written", loc.kernelDir())
	}
	report(true, "kernel gonb in "+loc.kernelDir())
	if s.Stack == venvStack {
		if !s.VenvPython {
			return s, errors.New(venvHelp(s))
		}
		if missing := pinsMissing(s.VenvPackages); len(missing) > 0 {
			return s, fmt.Errorf("after installing, %s has %v, want %v", loc.venv, s.VenvPackages, missing)
		}
		if s.Root && !s.AllowRoot {
			return s, fmt.Errorf("after writing it, %s does not set ServerApp.allow_root", allowRootFile(loc.venv))
		}
	}
	if !s.jupyterOK() {
		return s, errors.New(jupyterHelp(s))
	}
	out, err := exec.Command(s.Jupyter, "kernelspec", "list").Output()
	if err != nil {
		return s, fmt.Errorf("`%s kernelspec list` failed: %v", s.Jupyter, err)
	}
	if found := listedKernelDir(string(out), "gonb"); found != loc.kernelDir() {
		why := "JUPYTER_DATA_DIR or JUPYTER_PATH differs?"
		if found != "" && s.Stack == venvStack {
			why = "it comes before the environment's: remove it, or set JUPYTER_PREFER_ENV_PATH=1"
		}
		return s, fmt.Errorf("`%s kernelspec list` finds the gonb kernel in %q, not in %s (%s)", s.Jupyter, found,
			loc.kernelDir(), why)
	}
	report(true, fmt.Sprintf("jupyter %s (python %s with %s)", s.Jupyter, s.JupyterPython,
		strings.Join(pythonModules, ", ")))
	return s, nil
}

// listedKernelDir returns the folder that the output of `jupyter kernelspec list` gives for kernel name; "" when
// it lists no such kernel.
func listedKernelDir(list, name string) string {
	for _, line := range strings.Split(list, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			return strings.TrimSpace(rest) // the folder may hold spaces
		}
	}
	return ""
}

// report prints one line for a component that was found ready before any step ran.
func report(ok bool, what string) {
	if ok {
		fmt.Printf("%-32s ok\n", what)
	}
}

func describe(st step) string {
	var cmds []string
	for _, c := range st.Cmds {
		cmds = append(cmds, strings.Join(c, " "))
	}
	s := strings.Join(cmds, " && ")
	if st.Kind == runInTmpMod {
		s = "(in a temporary module) " + s
	}
	if st.Kind == writeKernel && len(st.Env) > 0 {
		s = strings.Join(st.Env, " ") + " " + s
	}
	switch st.Kind {
	case writeKernel:
		s += ", then set kernel.json's argv (log to a file) and env PATH (Go's bin folder first)"
	case patchKernel:
		s = "set kernel.json's argv (log to a file) and env PATH (Go's bin folder first)"
	case makeDir:
		s = "create " + st.Path
	case allowRoot:
		s = "set ServerApp.allow_root in " + st.Path + " (as root, `jupyter lab` refuses to start without it)"
	case installPlugin:
		var from []string
		for _, src := range st.Sources {
			if src == fromWheel {
				from = append(from, fmt.Sprintf("pip download %s==%s from PyPI, check its sha256",
					pjrtPackage, pjrtVersion))
			} else {
				from = append(from, "run "+src.String())
			}
		}
		s = fmt.Sprintf("%s, for %s in %s (optional: on failure the models run on the pure-Go backend)",
			strings.Join(from, ", else "), pjrt.PluginName, st.Path)
	}
	return s
}

// execute carries out one step, returning an error that names the failing command and ends with its last output.
func execute(st step, logFile string) error {
	switch st.Kind {
	case makeDir:
		return os.MkdirAll(st.Path, 0o755)
	case allowRoot:
		return setAllowRoot(st.Path)
	case patchKernel:
		return patchKernelSpec(st.KernelDir, wantKernelArgv(st.Path, logFile), wantKernelPath(filepath.Dir(st.Path)))
	case installPlugin:
		_, err := tryPluginSources(st.Path, st.Sources, st.installFrom)
		return err
	}
	dir := ""
	if st.Kind == runInTmpMod {
		tmp, err := os.MkdirTemp("", "kernelsetup-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	for _, c := range st.Cmds {
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), st.Env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("`%s` failed (%v)%s", strings.Join(c, " "), err, tail(out.String(), 3))
		}
	}
	if st.Kind == writeKernel {
		gonb := st.Cmds[0][0]
		return patchKernelSpec(st.KernelDir, wantKernelArgv(gonb, logFile), wantKernelPath(filepath.Dir(gonb)))
	}
	return nil
}

// setAllowRoot sets ServerApp.allow_root in the Jupyter server configuration file (allowRootConfig), creating it
// and its folder where they are missing.
func setAllowRoot(file string) error {
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if data, err = allowRootConfig(data); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}

// patchKernelSpec sets the argv of the kernel spec in dir (GoNB's --install only forwards a few flags) and the
// PATH of its env, keeping the rest of kernel.json, and replaces the file atomically (a kernel may be starting).
func patchKernelSpec(dir string, argv []string, path string) error {
	file := filepath.Join(dir, "kernel.json")
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read kernel.json written by gonb: %w", err)
	}
	if data, err = patchedKernelSpec(data, argv, path); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".kernel.json-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// patchedKernelSpec returns kernel.json data with argv and env.PATH set, the other fields as they were.
func patchedKernelSpec(data []byte, argv []string, path string) ([]byte, error) {
	var spec kernelSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, err
	}
	spec["argv"] = argv
	env, _ := spec["env"].(map[string]any)
	if env == nil {
		env = map[string]any{}
	}
	env["PATH"] = path
	spec["env"] = env
	out, err := json.MarshalIndent(spec, "", "  ")
	return append(out, '\n'), err
}

// tail returns the last n non-empty lines of out, each on its own indented line, for error messages.
func tail(out string, n int) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return ""
	}
	return ":\n    " + strings.Join(lines, "\n    ")
}
