package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/agentrl-go/agentrl/internal/pjrt"
	"github.com/agentrl-go/agentrl/internal/setup"
)

// binVersion returns the version of module mod recorded in binary path, or "" if the binary is absent.
func binVersion(path, mod string) string {
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	out, err := exec.Command("go", "version", "-m", path).Output()
	if err != nil {
		return ""
	}
	return moduleVersion(string(out), mod)
}

// userDataDir is the user's Jupyter data folder, where `gonb --install` writes its kernel spec on the system
// stack (it follows JUPYTER_DATA_DIR like GoNB does).
func userDataDir() string {
	if dir := os.Getenv("JUPYTER_DATA_DIR"); dir != "" {
		return dir
	}
	home, _ := os.UserHomeDir()
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Jupyter")
	}
	return filepath.Join(home, ".local", "share", "jupyter")
}

// kernelSpec is the part of kernel.json we read and rewrite; other fields are kept as they are.
type kernelSpec map[string]any

// readKernelSpec reads kernel.json in the kernel folder dir.
func readKernelSpec(dir string) (kernelSpec, error) {
	data, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		return nil, err
	}
	var spec kernelSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, err
	}
	return spec, nil
}

func (k kernelSpec) argv() []string {
	raw, _ := k["argv"].([]any)
	var argv []string
	for _, a := range raw {
		s, _ := a.(string)
		argv = append(argv, s)
	}
	return argv
}

// probe inspects the machine for the setup in loc: the Go tools in loc.gobin, the kernel spec in loc.kernelDir(),
// GoNB's log folder, the PJRT CPU plugin in loc.pjrtDir ("": not wanted) and the stack's Jupyter: the system's
// (setup.SystemJupyter), or on the venv stack the Python that makes the virtual environment and the environment's
// Jupyter, packages and permission to serve as root (allowRootFile).
func probe(loc locations) state {
	s := state{
		Stack:            loc.stack,
		GonbVersion:      binVersion(filepath.Join(loc.gobin, "gonb"), gonbModule),
		GoimportsVersion: binVersion(filepath.Join(loc.gobin, "goimports"), toolsModule),
		GoplsVersion:     binVersion(filepath.Join(loc.gobin, "gopls"), goplsModule),
		Root:             os.Geteuid() == 0,
		Debian:           isDebian(),
		PJRT:             loc.pjrtDir != "" && pjrtInstalled(loc.pjrtDir),
		Platform:         runtime.GOOS + "/" + runtime.GOARCH,
		XLA:              pjrt.XLACompiledIn,
	}
	if st, err := os.Stat(filepath.Dir(loc.logFile)); err == nil && st.IsDir() {
		s.LogDir = true
	}
	if spec, err := readKernelSpec(loc.kernelDir()); err == nil {
		s.KernelArgv = spec.argv()
		if s.KernelArgv == nil {
			s.KernelArgv = []string{} // a kernel.json without argv is there: patch it rather than reinstall
		}
		env, _ := spec["env"].(map[string]any)
		s.KernelPath, _ = env["PATH"].(string)
	}
	_, err := exec.LookPath("apt-get")
	s.HaveApt = err == nil
	if loc.stack == venvStack {
		probeBasePython(&s)
		probeVenv(&s, loc.venv)
		data, err := os.ReadFile(allowRootFile(loc.venv))
		s.AllowRoot = err == nil && allowsRoot(data)
		if j := filepath.Join(loc.venv, "bin", "jupyter"); s.VenvPython && fileExists(j) {
			s.Jupyter = j
		}
	} else {
		s.Jupyter, _ = setup.SystemJupyter()
	}
	if s.Jupyter == "" {
		return s
	}
	s.Kernelspec = exec.Command(s.Jupyter, "kernelspec", "list").Run() == nil
	s.JupyterPython = setup.ScriptInterpreter(s.Jupyter)
	for _, m := range pythonModules {
		if s.JupyterPython == "" || exec.Command(s.JupyterPython, "-c", "import "+m).Run() != nil {
			s.MissingModules = append(s.MissingModules, m)
		}
	}
	return s
}

// fileExists reports whether path names something that exists (a link is followed).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
