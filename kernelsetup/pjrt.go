package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/internal/pjrt"
)

// GoMLX's XLA backend needs a PJRT CPU plugin, which GoMLX downloads from GitHub (github.com/gomlx/pjrt-cpu-binaries)
// with go-xla's installer; some machines reach only package registries. For Linux x86-64, the Python package below
// ships a plugin (XLA, Apache-2.0) that go-xla v0.1.4 loads (PJRT C API 0.115; go-xla checks no version): we
// download its wheel with pip, check its hash, and extract the one shared library into pjrt.Dir, where
// gomlxmodel.NewEngine finds it. The committed notebooks were computed with it. Where the wheel does not exist or
// cannot be fetched, go-xla's own installer is tried (kernelsetup/goxla, a program of its own; go-xla publishes no
// checksums); where that fails too, the models run on the pure-Go backend. The plugin is optional: its step never
// fails the setup.
const (
	pjrtPackage     = "lammps-jax-pjrt-cpu"
	pjrtVersion     = "0.11.2"
	pjrtWheelSHA256 = "1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1"
	pjrtLibSHA256   = pjrt.PinnedSHA256
)

// pluginSource is a way to get the PJRT CPU plugin.
type pluginSource int

const (
	fromWheel pluginSource = iota // the PyPI wheel pjrtPackage==pjrtVersion (Linux x86-64 only)
	fromGoXLA                     // go-xla's installer, from GitHub releases (what GoMLX does when online)
)

func (p pluginSource) String() string {
	if p == fromWheel {
		return "PyPI wheel " + pjrtPackage + "==" + pjrtVersion
	}
	return "go-xla's installer (github.com/" + pjrt.GoXLAReleases + ")"
}

// pluginSources returns the sources that serve platform (GOOS/GOARCH), in the order to try them.
func pluginSources(platform string) []pluginSource {
	var sources []pluginSource
	if platform == "linux/amd64" {
		sources = append(sources, fromWheel)
	}
	if slices.Contains(pjrt.GoXLAPlatforms(), strings.ReplaceAll(platform, "/", "_")) {
		sources = append(sources, fromGoXLA)
	}
	return sources
}

// installFrom fetches the plugin into dir from one source, for an installPlugin step: the wheel with the pip of
// the step's Python when it has one.
func (st step) installFrom(src pluginSource, dir string) error {
	if src == fromWheel {
		return installPJRT(dir, st.Python)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := runGoXLA(dir); err != nil {
		return err
	}
	if !goxlaInstalled(dir) {
		return fmt.Errorf("go-xla's installer left no %s in %s", pjrt.PluginName, dir)
	}
	return nil
}

// goxlaCommand is the program that runs go-xla's installer (kernelsetup/goxla), built and run by `go run` so that
// kernelsetup itself links no GoMLX package.
const goxlaCommand = "github.com/agentrl-go/agentrl/kernelsetup/goxla"

// runGoXLA runs go-xla's installer into dir with goxlaCommand, its progress on stdout. It installs go-xla's default
// plugin version for this platform unless it is there, and links pjrt.PluginName to it. The error is the last line
// the command wrote on stderr (its one-line error, or what `go run` said last).
func runGoXLA(dir string) error {
	cmd := exec.Command("go", "run", goxlaCommand, dir)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = os.Stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return errors.New(last)
	}
	return fmt.Errorf("go run %s: %w", goxlaCommand, err)
}

// tryPluginSources tries the sources in order with install and returns the one that worked, or an error of one line
// that names what each one said.
func tryPluginSources(dir string, sources []pluginSource, install func(pluginSource, string) error) (pluginSource, error) {
	var msgs []string
	for _, src := range sources {
		err := install(src, dir)
		if err == nil {
			return src, nil
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		msgs = append(msgs, fmt.Sprintf("%s: %s", src, strings.TrimSuffix(first, ":")))
	}
	if len(msgs) == 0 {
		return 0, errors.New("no source serves this platform")
	}
	return 0, errors.New(strings.Join(msgs, "; "))
}

// pjrtInstalled reports whether dir holds a plugin: the pinned wheel's library, or the one go-xla's installer put
// there.
func pjrtInstalled(dir string) bool {
	sum, err := fileSHA256(filepath.Join(dir, pjrt.PluginName))
	return err == nil && sum == pjrtLibSHA256 || goxlaInstalled(dir)
}

// goxlaInstalled reports whether pjrt.PluginName in dir is go-xla's installer's link to a versioned
// plugin (pjrt_c_api_cpu_<version>_plugin.so) that is there.
func goxlaInstalled(dir string) bool {
	target, err := os.Readlink(filepath.Join(dir, pjrt.PluginName))
	if err != nil || filepath.Base(target) != target {
		return false
	}
	if ok, _ := filepath.Match("pjrt_c_api_cpu_*_plugin.so", target); !ok {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, target))
	return err == nil && st.Mode().IsRegular()
}

// installPJRT downloads the plugin's wheel with pip (python's, when it runs one, else findPip's) and extracts the
// checked plugin into dir.
func installPJRT(dir, python string) error {
	pip := findPip(python)
	if pip == nil {
		return errors.New("no pip found (python3 -m pip; Debian: apt-get install -y python3-pip)")
	}
	tmp, err := os.MkdirTemp("", "agentrl-pjrt-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := append(pip[1:], "download", "--no-deps", "--only-binary=:all:", "-d", tmp, pjrtPackage+"=="+pjrtVersion)
	if out, err := exec.Command(pip[0], args...).CombinedOutput(); err != nil {
		return fmt.Errorf("pip download %s==%s: %v%s", pjrtPackage, pjrtVersion, err, tail(string(out), 3))
	}
	wheels, _ := filepath.Glob(filepath.Join(tmp, "*.whl"))
	if len(wheels) != 1 {
		return fmt.Errorf("pip download left %d wheels in %s", len(wheels), tmp)
	}
	if sum, err := fileSHA256(wheels[0]); err != nil || sum != pjrtWheelSHA256 {
		return fmt.Errorf("wheel %s: sha256 %s, want %s (%v)", filepath.Base(wheels[0]), sum, pjrtWheelSHA256, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return extractChecked(wheels[0], pjrt.PluginName, filepath.Join(dir, pjrt.PluginName), pjrtLibSHA256)
}

// findPip returns a command that runs pip: python -m pip, with the first of pythons, python3 on PATH and Debian's
// /usr/bin/python3 that has pip; nil when none has.
func findPip(pythons ...string) []string {
	for _, py := range append(slices.DeleteFunc(pythons, func(p string) bool { return p == "" }), "python3", "/usr/bin/python3") {
		if exec.Command(py, "-m", "pip", "--version").Run() == nil {
			return []string{py, "-m", "pip"}
		}
	}
	return nil
}

// extractChecked writes the archive member whose base name is name to dst, atomically, if its sha256 is want.
func extractChecked(archive, name, dst, want string) error {
	zr, err := zip.OpenReader(archive)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if filepath.Base(f.Name) != name {
			continue
		}
		src, err := f.Open()
		if err != nil {
			return err
		}
		defer src.Close()
		out, err := os.CreateTemp(filepath.Dir(dst), ".partial-*")
		if err != nil {
			return err
		}
		defer os.Remove(out.Name())
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(out, h), src); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return fmt.Errorf("%s in %s: sha256 %s, want %s", name, filepath.Base(archive), got, want)
		}
		return os.Rename(out.Name(), dst)
	}
	return fmt.Errorf("%s has no %s", filepath.Base(archive), name)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pjrtHint is the line printed about the backend after setup. asked says whether the plugin was wanted (no
// -no-xla).
func pjrtHint(s state, dir string, asked bool) string {
	switch {
	case s.PJRT:
		return "XLA backend: PJRT CPU plugin in " + dir + " (GOMLX_BACKEND=go selects the pure-Go backend)"
	case !asked:
		return "XLA backend: not installed; models run on the pure-Go backend (rerun without -no-xla to install it)"
	case !s.XLA:
		return "XLA backend: GoMLX does not build it on " + s.Platform + "; models run on the pure-Go backend"
	case len(pluginSources(s.Platform)) == 0:
		return "XLA backend: no PJRT CPU plugin is published for " + s.Platform +
			"; models run on the pure-Go backend"
	case dir == "":
		return "XLA backend: no folder for the PJRT CPU plugin (set " + pjrt.DirEnv +
			"); models run on the pure-Go backend"
	}
	return "XLA backend: PJRT CPU plugin not installed; models run on the pure-Go backend (rerun to retry)"
}
