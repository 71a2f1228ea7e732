package gomlxmodel

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/internal/xlacache"
)

// On the XLA backend, compiling the graphs dominates a short program: every process (every GoNB cell) compiles
// its graphs again. The executable cache (package xlacache) keeps the executables the PJRT plugin compiles in a
// folder, keyed by the program and by everything else that decides the generated code (xlaCacheIdentity), so a
// later process loads them instead. A loaded executable is the plugin's own serialization of the one compiled,
// so results are bit-identical with and without the cache.

// XLACacheEnv disables the executable cache when set to "off" (or "0", "false").
const XLACacheEnv = "AGENTRL_XLA_CACHE"

// XLACacheDirEnv overrides the executable cache's folder.
const XLACacheDirEnv = "AGENTRL_XLA_CACHE_DIR"

// XLACacheMaxEnv bounds the executable cache's folder, in MiB (default XLACacheDefaultMaxMB; 0 or less: no
// bound). When a new executable would exceed the bound, the least recently used ones are removed.
const XLACacheMaxEnv = "AGENTRL_XLA_CACHE_MAX_MB"

// XLACacheDefaultMaxMB is the bound of the executable cache's folder, in MiB, when XLACacheMaxEnv is unset.
const XLACacheDefaultMaxMB = 512

// XLACacheDir is the executable cache's folder: $AGENTRL_XLA_CACHE_DIR, else xla-executables under the result
// store's folder ($AGENTRL_CACHE, else agentrl under the user cache folder); "" where none can be named. A test
// binary gets no default under the user cache folder: its tests run without the cache unless one of the two
// variables names a folder (this package's TestMain names a temporary one).
func XLACacheDir() string {
	if dir := os.Getenv(XLACacheDirEnv); dir != "" {
		return dir
	}
	if dir := os.Getenv("AGENTRL_CACHE"); dir != "" {
		return filepath.Join(dir, "xla-executables")
	}
	if testing.Testing() {
		return ""
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "agentrl", "xla-executables")
	}
	return ""
}

// xlaCacheEnabled reports whether the executable cache is on (the default).
func xlaCacheEnabled() bool {
	switch strings.ToLower(os.Getenv(XLACacheEnv)) {
	case "off", "0", "false", "no":
		return false
	}
	return XLACacheDir() != ""
}

// xlaCacheLimit is the bound of the executable cache's folder in bytes: $AGENTRL_XLA_CACHE_MAX_MB MiB, else
// XLACacheDefaultMaxMB MiB; 0 (no bound) for a value of 0 or less.
func xlaCacheLimit() int64 {
	mb := int64(XLACacheDefaultMaxMB)
	if v, err := strconv.ParseInt(strings.TrimSpace(os.Getenv(XLACacheMaxEnv)), 10, 64); err == nil {
		mb = v
	}
	if mb <= 0 {
		return 0
	}
	return mb << 20
}

// xlaCacheIdentity names what, besides the program, decides the code the plugin at pluginPath compiles: the
// plugin's build (its file's SHA-256), the Processor and XLA_FLAGS. ok is false where the plugin cannot be
// identified.
func xlaCacheIdentity(pluginPath string) (id string, ok bool) {
	sum, err := pluginHashMemo(pluginPath)
	if err != nil {
		return "", false
	}
	return "plugin-sha256=" + sum + "\ncpu=" + Processor() + "\nXLA_FLAGS=" + os.Getenv("XLA_FLAGS"), true
}

// installXLACache puts the executable cache between go-xla and the plugin at pluginPath, an absolute path that
// the XLA backend is then created with. Where the cache is off, or the plugin cannot be identified or wrapped,
// it does nothing and the backend loads and compiles as GoMLX does.
func installXLACache(pluginPath string) {
	if !xlaCacheEnabled() {
		return
	}
	id, ok := xlaCacheIdentity(pluginPath)
	if !ok {
		return
	}
	_ = xlacache.Install(pluginPath, xlacache.NewStore(XLACacheDir(), id).SetLimit(xlaCacheLimit()))
}

// XLACacheStats reports this process's use of the executable cache: programs loaded from it, compiled, found
// unusable, stored, and the time each took. All zero on the pure-Go backend or with the cache off.
func XLACacheStats() xlacache.Stats {
	return xlacache.CurrentStats()
}
