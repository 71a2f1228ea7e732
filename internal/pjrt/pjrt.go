//codekey:reads the plugin's folder from the environment: the plugin's build is in the engine's numerics

// Package pjrt names the PJRT CPU plugin that GoMLX's XLA backend runs on: which build is pinned, where it is
// installed, and whether this program's GoMLX can use one at all. It imports only the standard library, so that
// the kernel's setup (kernelsetup), which installs the plugin, links no GoMLX.
package pjrt

import (
	"os"
	"path/filepath"
)

// PinnedSHA256 is the SHA-256 of the PJRT CPU plugin that kernelsetup installs on Linux x86-64 (from the wheel
// lammps-jax-pjrt-cpu 0.11.2), the one that computed the committed notebooks. An engine's numerics name any other
// plugin build by its hash.
const PinnedSHA256 = "ad1309ac822b1b24d51b7f9947c7c9fa9ef5d67f390584cbc3d1fa2428fed9c2"

// DirEnv overrides the directory that holds the PJRT CPU plugin.
const DirEnv = "AGENTRL_PJRT_DIR"

// PluginName is the file name GoMLX's XLA backend looks for.
const PluginName = "pjrt_c_api_cpu_plugin.so"

// Dir is where the PJRT CPU plugin is installed: $AGENTRL_PJRT_DIR, or agentrl/pjrt under the user's data
// directory ($XDG_DATA_HOME, default ~/.local/share); "" where neither can be named.
func Dir() string {
	if dir := os.Getenv(DirEnv); dir != "" {
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
