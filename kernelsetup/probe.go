package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/agentrl-go/agentrl/gomlxmodel"
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

// kernelDir is where `gonb --install` writes its kernel spec (it follows JUPYTER_DATA_DIR like GoNB does).
func kernelDir() string {
	dir := os.Getenv("JUPYTER_DATA_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		if runtime.GOOS == "darwin" {
			dir = filepath.Join(home, "Library", "Jupyter")
		} else {
			dir = filepath.Join(home, ".local", "share", "jupyter")
		}
	}
	return filepath.Join(dir, "kernels", "gonb")
}

// kernelSpec is the part of kernel.json we read and rewrite; other fields are kept as they are.
type kernelSpec map[string]any

func readKernelSpec() (kernelSpec, error) {
	data, err := os.ReadFile(filepath.Join(kernelDir(), "kernel.json"))
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

// probe inspects the machine. gobin is where `go install` puts binaries, logFile GoNB's log file and pjrtDir the
// folder of the PJRT CPU plugin ("": not wanted).
func probe(gobin, logFile, pjrtDir string) state {
	s := state{
		GonbVersion:      binVersion(filepath.Join(gobin, "gonb"), gonbModule),
		GoimportsVersion: binVersion(filepath.Join(gobin, "goimports"), toolsModule),
		GoplsVersion:     binVersion(filepath.Join(gobin, "gopls"), goplsModule),
		Root:             os.Geteuid() == 0,
		PJRT:             pjrtDir != "" && pjrtInstalled(pjrtDir),
		Platform:         runtime.GOOS + "/" + runtime.GOARCH,
		XLA:              gomlxmodel.XLACompiledIn(),
	}
	if st, err := os.Stat(filepath.Dir(logFile)); err == nil && st.IsDir() {
		s.LogDir = true
	}
	if spec, err := readKernelSpec(); err == nil {
		s.KernelArgv = spec.argv()
		if s.KernelArgv == nil {
			s.KernelArgv = []string{} // a kernel.json without argv is there: patch it rather than reinstall
		}
		env, _ := spec["env"].(map[string]any)
		s.KernelPath, _ = env["PATH"].(string)
	}
	_, err := exec.LookPath("apt-get")
	s.HaveApt = err == nil
	s.Jupyter, _ = setup.Jupyter()
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
