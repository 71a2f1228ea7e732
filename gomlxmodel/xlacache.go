package gomlxmodel

import (
	"os"
	"path/filepath"

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

// XLATraceEnv names a file to which the executable cache appends one line per program loaded, waited for or
// compiled, by every process that shares the variable: how a cold chapter's compilations are counted.
const XLATraceEnv = "AGENTRL_XLA_TRACE"

// XLACacheDir is the executable cache's folder that the environment names: $AGENTRL_XLA_CACHE_DIR, else
// xla-executables under the result store's folder ($AGENTRL_CACHE); "" where neither is set (DefaultOptions then
// picks one under the user cache folder).
func XLACacheDir() string {
	if dir := os.Getenv(XLACacheDirEnv); dir != "" {
		return dir
	}
	if dir := os.Getenv("AGENTRL_CACHE"); dir != "" {
		return filepath.Join(dir, "xla-executables")
	}
	return ""
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

// installXLACache puts the executable cache in folder dir, bounded to limit bytes (0: no bound) and traced to
// the file trace ("": not traced), between go-xla and the plugin at pluginPath, an absolute path that the XLA
// backend is then created with. The cache is the process's (go-xla registers a plugin once): the first call installs it, later ones leave it as it is. Where
// the plugin cannot be identified or wrapped, it does nothing and the backend loads and compiles as GoMLX does.
func installXLACache(pluginPath, dir string, limit int64, trace string) {
	id, ok := xlaCacheIdentity(pluginPath)
	if !ok {
		return
	}
	store := xlacache.NewStore(dir, id).SetLimit(limit)
	if trace != "" {
		if f, err := os.OpenFile(trace, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			store.SetTrace(f) // open for the life of the process, as the installed cache is
		}
	}
	_ = xlacache.Install(pluginPath, store)
}

// XLACacheStats reports this process's use of the executable cache: programs loaded from it, compiled, found
// unusable, stored, and the time each took. All zero on the pure-Go backend or with the cache off.
func XLACacheStats() xlacache.Stats {
	return xlacache.CurrentStats()
}
