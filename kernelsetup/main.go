// Command kernelsetup makes a machine ready to run the chapter's notebooks: it installs GoNB v0.11.1, goimports and
// gopls into Go's bin folder ($(go env GOBIN), else the bin folder of the first GOPATH entry), registers the GoNB
// kernel with Jupyter (logging to a file in the user cache folder), installs the PJRT CPU plugin of GoMLX's XLA
// backend into gomlxmodel.PJRTDir (it downloads a wheel from PyPI with `python3 -m pip download` and checks its
// SHA-256; see pjrt.go), and checks that Jupyter (with nbconvert and nbclient) is there.
//
//	go run ./kernelsetup                  # install the Go tools and the PJRT plugin, register the kernel, check Jupyter
//	go run ./kernelsetup -install-jupyter # also install Jupyter with apt-get when it is missing (Debian, as root)
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

	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/internal/setup"
)

func main() {
	installJupyter := flag.Bool("install-jupyter", false,
		"install Jupyter with apt-get when it is missing (packages: "+aptPackages+")")
	dryRun := flag.Bool("n", false, "print the planned steps and exit")
	noXLA := flag.Bool("no-xla", false, "do not install the PJRT CPU plugin of the XLA backend")
	flag.Parse()
	if err := run(*installJupyter, *dryRun, !*noXLA); err != nil {
		fmt.Fprintln(os.Stderr, "kernelsetup:", err)
		os.Exit(1)
	}
}

func run(installJupyter, dryRun, xla bool) error {
	gobin, err := setup.GoBin()
	if err != nil {
		return err
	}
	// The tools run by `gonb --install` and by the kernel must be found on PATH.
	userPath := os.Getenv("PATH")
	os.Setenv("PATH", gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		return fmt.Errorf("no user cache directory for GoNB's log: %w", err)
	}
	logFile := filepath.Join(cacheDir, "gonb", "gonb.log")
	gonbPath := filepath.Join(gobin, "gonb")
	pjrtDir := ""
	if xla {
		if pjrtDir = gomlxmodel.PJRTDir(); pjrtDir == "" {
			return fmt.Errorf("no folder for the PJRT CPU plugin: set %s (or run with -no-xla)", gomlxmodel.PJRTDirEnv)
		}
	}

	s := probe(gobin, logFile, pjrtDir)
	steps := plan(s, gonbPath, logFile, pjrtDir, installJupyter)
	if dryRun {
		for _, st := range steps {
			fmt.Printf("would %s: %s\n", st.Name, describe(st))
		}
		if !s.jupyterOK() && !installJupyter {
			return errors.New(jupyterHelp(s))
		}
		if len(steps) == 0 {
			fmt.Println("nothing to do")
		}
		return nil
	}
	report(s.GonbVersion == gonbVersion, "gonb "+gonbVersion)
	report(s.GoimportsVersion == toolsVersion, "goimports "+toolsVersion)
	report(s.GoplsVersion == goplsVersion, "gopls "+goplsVersion)
	report(pjrtDir != "" && s.PJRT, "PJRT CPU plugin")
	for _, st := range steps {
		if st.Kind == runCmds && st.Cmds[0][0] == "apt-get" && !s.Root {
			return fmt.Errorf("installing Jupyter needs root: run `sudo apt-get install -y %s`, then rerun "+
				"`go run ./kernelsetup`", aptPackages)
		}
		start := time.Now()
		if err := execute(st, logFile); err != nil {
			return fmt.Errorf("%s: %w", st.Name, err)
		}
		fmt.Printf("%-32s done (%.1fs)\n", st.Name, time.Since(start).Seconds())
	}

	// Check the result, including Jupyter, which may have just been installed.
	s = probe(gobin, logFile, pjrtDir)
	if s.GonbVersion != gonbVersion || s.GoimportsVersion != toolsVersion || s.GoplsVersion != goplsVersion {
		return fmt.Errorf("after installing, %s has gonb %q, goimports %q, gopls %q (is GOBIN writable?)",
			gobin, s.GonbVersion, s.GoimportsVersion, s.GoplsVersion)
	}
	if !slices.Equal(s.KernelArgv, wantKernelArgv(gonbPath, logFile)) {
		return fmt.Errorf("kernel spec in %s is not the one written", kernelDir())
	}
	report(true, "kernel gonb in "+kernelDir())
	if !s.jupyterOK() {
		return errors.New(jupyterHelp(s))
	}
	out, err := exec.Command(s.Jupyter, "kernelspec", "list").Output()
	if err != nil || !strings.Contains(string(out), kernelDir()) {
		return fmt.Errorf("`%s kernelspec list` does not list %s (JUPYTER_DATA_DIR differs?)", s.Jupyter, kernelDir())
	}
	report(true, fmt.Sprintf("jupyter %s (python %s with %s)", s.Jupyter, s.JupyterPython,
		strings.Join(pythonModules, ", ")))
	if !onPath(gobin, userPath) {
		fmt.Printf("note: add %s to PATH so Jupyter finds gonb and goimports: export PATH=\"%s:$PATH\"\n", gobin, gobin)
	}
	if pjrtDir == "" { // -no-xla: say whether a plugin is there all the same
		pjrtDir = gomlxmodel.PJRTDir()
		s.PJRT = pjrtDir != "" && pjrtInstalled(pjrtDir)
	}
	fmt.Println(pjrtHint(pjrtDir, s.PJRT))
	fmt.Printf("ready; GoNB logs go to %s\n", logFile)
	return nil
}

// report prints one line for a component that was found ready before any step ran.
func report(ok bool, what string) {
	if ok {
		fmt.Printf("%-32s ok\n", what)
	}
}

func onPath(dir, path string) bool {
	for _, d := range filepath.SplitList(path) {
		if filepath.Clean(d) == filepath.Clean(dir) {
			return true
		}
	}
	return false
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
	switch st.Kind {
	case writeKernel:
		s += ", then set kernel.json argv to log to a file"
	case makeDir:
		s = "create " + st.Path
	case installPlugin:
		s = fmt.Sprintf("python3 -m pip download %s==%s from PyPI, check its sha256, extract %s into %s",
			pjrtPackage, pjrtVersion, gomlxmodel.PJRTPluginName, st.Path)
	}
	return s
}

// execute carries out one step, returning an error that names the failing command and ends with its last output.
func execute(st step, logFile string) error {
	switch st.Kind {
	case makeDir:
		return os.MkdirAll(st.Path, 0o755)
	case installPlugin:
		return installPJRT(st.Path)
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
		return setKernelArgv(wantKernelArgv(st.Cmds[0][0], logFile))
	}
	return nil
}

// setKernelArgv rewrites the argv of the registered kernel (GoNB's --install only forwards a few flags).
func setKernelArgv(argv []string) error {
	spec, err := readKernelSpec()
	if err != nil {
		return fmt.Errorf("read kernel.json written by gonb: %w", err)
	}
	spec["argv"] = argv
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(kernelDir(), "kernel.json"), append(data, '\n'), 0o644)
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
