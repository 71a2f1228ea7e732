package gomlxmodel

import (
	"os"
	"path/filepath"
)

// The XLA backend runs TinyAgent about ten times faster than the pure-Go backend on CPU, but its PJRT CPU plugin
// is normally downloaded from the internet at first use. `go run ./kernelsetup` installs a plugin from a Python
// package instead (see kernelsetup/pjrt.go) into PJRTDir; when one is there, Backend uses it.

// PJRTDirEnv overrides the directory that holds the PJRT CPU plugin.
const PJRTDirEnv = "AGENTRL_PJRT_DIR"

// PJRTPluginName is the file name GoMLX's XLA backend looks for.
const PJRTPluginName = "pjrt_c_api_cpu_plugin.so"

// PJRTDir is where the PJRT CPU plugin is installed: $AGENTRL_PJRT_DIR, or agentrl/pjrt under the user's data
// directory ($XDG_DATA_HOME, default ~/.local/share).
func PJRTDir() string {
	if dir := os.Getenv(PJRTDirEnv); dir != "" {
		return dir
	}
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "agentrl", "pjrt")
}

// installedPJRT returns the directory of an installed PJRT CPU plugin, or "".
func installedPJRT() string {
	dir := PJRTDir()
	if dir == "" {
		return ""
	}
	if st, err := os.Stat(filepath.Join(dir, PJRTPluginName)); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return dir
}
