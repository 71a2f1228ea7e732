package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// GoMLX's XLA backend needs a PJRT CPU plugin, which it normally downloads from GitHub; these machines reach
// only package registries. The Python package below ships a plugin (XLA, Apache-2.0) that go-xla v0.1.4 loads
// (PJRT C API 0.115; go-xla checks no version): we download its wheel with pip, check its hash, and extract
// the one shared library into gomlxmodel.PJRTDir, where gomlxmodel.Backend finds it.
const (
	pjrtPackage     = "lammps-jax-pjrt-cpu"
	pjrtVersion     = "0.11.2"
	pjrtWheelSHA256 = "1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1"
	pjrtLibSHA256   = "ad1309ac822b1b24d51b7f9947c7c9fa9ef5d67f390584cbc3d1fa2428fed9c2"
)

// pjrtInstalled reports whether dir holds the expected plugin.
func pjrtInstalled(dir string) bool {
	sum, err := fileSHA256(filepath.Join(dir, gomlxmodel.PJRTPluginName))
	return err == nil && sum == pjrtLibSHA256
}

// installPJRT downloads the plugin's wheel with pip and extracts the checked plugin into dir.
func installPJRT(dir string) error {
	pip := findPip()
	if pip == nil {
		return errors.New("no pip found (python3 -m pip): install it (Debian: apt-get install -y python3-pip), " +
			"or run with -no-xla to use the pure-Go backend only")
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
	return extractChecked(wheels[0], gomlxmodel.PJRTPluginName, filepath.Join(dir, gomlxmodel.PJRTPluginName), pjrtLibSHA256)
}

// findPip returns a command that runs pip: python3 -m pip, from PATH or Debian's /usr/bin/python3.
func findPip() []string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
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

// pjrtHint is the line printed about the backend after setup.
func pjrtHint(dir string, installed bool) string {
	if installed {
		return "XLA backend: PJRT CPU plugin in " + dir + " (GOMLX_BACKEND=go selects the pure-Go backend)"
	}
	return "XLA backend: not installed; models run on the pure-Go backend (rerun without -no-xla to install it)"
}
