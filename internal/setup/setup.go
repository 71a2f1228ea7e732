// Package setup finds what the notebooks need on this machine: Go's install directory, the repository's root and
// the Jupyter command with the Python that runs it. The kernel installer (kernelsetup) and the notebook harness
// (notebooks) share it, so that both look in the same places.
package setup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// JupyterEnv is the environment variable that names the jupyter command to use.
const JupyterEnv = "AGENTRL_JUPYTER"

// GoBin returns the directory `go install` writes to: $GOBIN, or bin under the first GOPATH entry.
func GoBin() (string, error) {
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return "", fmt.Errorf("`go env` failed (is Go installed and on PATH?): %v", err)
	}
	lines := strings.Split(string(out), "\n") // GOBIN's line is empty when it is unset
	if len(lines) > 0 && strings.TrimSpace(lines[0]) != "" {
		return strings.TrimSpace(lines[0]), nil
	}
	if len(lines) < 2 || strings.TrimSpace(lines[1]) == "" {
		return "", errors.New("`go env GOPATH` is empty")
	}
	return filepath.Join(filepath.SplitList(strings.TrimSpace(lines[1]))[0], "bin"), nil
}

// VenvDir is the project-local virtual environment, relative to the repository root, into which
// `go run ./kernelsetup` installs Jupyter with pip.
const VenvDir = ".venv"

// RepoRoot returns the repository root: the first folder at or above the working directory that holds a go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !st.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory: run it inside the repository")
		}
		dir = parent
	}
}

// VenvJupyter returns the path of the jupyter command of the virtual environment in the repository at root
// (whether or not it exists).
func VenvJupyter(root string) string {
	return filepath.Join(root, VenvDir, "bin", "jupyter")
}

// Jupyter returns the jupyter command, the first of: $AGENTRL_JUPYTER; .venv/bin/jupyter in the repository that
// holds the working directory (pip's Jupyter, which kernelsetup installs without root); SystemJupyter's.
func Jupyter() (string, error) {
	if os.Getenv(JupyterEnv) == "" {
		if root, err := RepoRoot(); err == nil && executable(VenvJupyter(root)) {
			return VenvJupyter(root), nil
		}
	}
	return SystemJupyter()
}

// SystemJupyter returns the machine's jupyter command, whatever the repository's virtual environment holds:
// $AGENTRL_JUPYTER, else /usr/bin/jupyter (Debian's, whose Python has the modules; a `jupyter` earlier on PATH may
// be a pyenv shim without them), else the one on PATH.
func SystemJupyter() (string, error) {
	if p := os.Getenv(JupyterEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s does not exist", JupyterEnv, p)
		}
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/jupyter"); err == nil {
		return "/usr/bin/jupyter", nil
	}
	if p, err := exec.LookPath("jupyter"); err == nil {
		return p, nil
	}
	return "", errors.New("jupyter not found")
}

// executable reports whether path is a file that someone may execute (a link is followed).
func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// ScriptInterpreter returns the interpreter named in a script's shebang, resolved on PATH; "" if there is none.
func ScriptInterpreter(script string) string {
	f, err := os.Open(script)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	py := shebangInterpreter(line)
	if py != "" && !strings.Contains(py, "/") {
		py, _ = exec.LookPath(py)
	}
	return py
}

// shebangInterpreter returns the interpreter of a script's first line: "#!/usr/bin/python3 -I" gives
// "/usr/bin/python3", "#!/usr/bin/env -S python3 -u" gives "python3" (env's options, with the values of
// -u and -C, and NAME=VALUE settings are skipped). "" if the line is not a shebang.
func shebangInterpreter(firstLine string) string {
	line, ok := strings.CutPrefix(strings.TrimSpace(firstLine), "#!")
	f := strings.Fields(line)
	if !ok || len(f) == 0 {
		return ""
	}
	if filepath.Base(f[0]) != "env" {
		return f[0]
	}
	args := f[1:]
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir":
			i++ // the option's value
		case !strings.HasPrefix(a, "-") && !strings.Contains(a, "="):
			return a
		}
	}
	return ""
}
