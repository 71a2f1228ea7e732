package gomlxmodel

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentrl-go/agentrl/internal/pjrt"
)

// The XLA backend runs TinyAgent about ten times faster than the pure-Go backend on CPU, but its PJRT CPU plugin
// is normally downloaded from the internet at first use. `go run ./kernelsetup` installs a plugin into pjrt.Dir
// instead (see kernelsetup/pjrt.go); when one is there, NewEngine uses it.

// installedPJRT returns dir where it holds a PJRT CPU plugin, or "".
func installedPJRT(dir string) string {
	if dir == "" {
		return ""
	}
	if st, err := os.Stat(filepath.Join(dir, pjrt.PluginName)); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return dir
}

// pluginBuild identifies the build of the PJRT plugin file at path (where "", the plugin mapped into this process):
// "" for the pinned plugin (pjrt.PinnedSHA256, so that the committed run's Numerics and cache keys stay as they
// were), else "sha256:" and the first 16 hex digits of its file's SHA-256, or "unknown" where the file cannot be
// found or read. Hashing the 200 MB plugin takes about 0.16 s, and every cell program makes an engine, so the
// hash is kept, keyed by the file's path, size and modification time, in the user cache folder (pluginHashMemo).
func pluginBuild(path string) string {
	if path == "" {
		path = mappedPJRT()
	}
	if path == "" {
		return "unknown"
	}
	sum, err := pluginHashMemo(path)
	switch {
	case err != nil:
		return "unknown"
	case sum == pjrt.PinnedSHA256:
		return ""
	}
	return "sha256:" + sum[:16]
}

// pluginHashMemo returns the SHA-256 of the file at path, reading it from a memo in the user cache folder when
// the file's path, size and modification time match the memo's, and writing the memo otherwise (best effort).
func pluginHashMemo(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	abs, _ := filepath.Abs(path)
	key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", abs, st.Size(), st.ModTime().UnixNano()))
	memo := ""
	if dir, err := os.UserCacheDir(); err == nil {
		memo = filepath.Join(dir, "agentrl", "pjrt-sha256", hex.EncodeToString(key[:12]))
		if data, err := os.ReadFile(memo); err == nil && len(data) == 64 {
			return string(data), nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if memo != "" && os.MkdirAll(filepath.Dir(memo), 0o755) == nil {
		if tmp, err := os.CreateTemp(filepath.Dir(memo), ".partial-*"); err == nil {
			_, werr := tmp.WriteString(sum)
			if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), memo) != nil {
				os.Remove(tmp.Name())
			}
		}
	}
	return sum, nil
}

// mappedPJRT returns the path of a PJRT plugin mapped into this process (from /proc/self/maps, Linux), or "".
func mappedPJRT() string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return ""
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		path := fields[len(fields)-1]
		if base := filepath.Base(path); strings.HasPrefix(base, "pjrt_c_api_") && strings.Contains(base, "plugin") {
			return path
		}
	}
	return ""
}
