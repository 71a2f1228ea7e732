package pjrt

// GoXLAReleases is the GitHub repository from which go-xla v0.1.4's installer downloads PJRT CPU plugins
// (installer.BinaryCPUReleasesRepo). kernelsetup/goxla's tests check it and GoXLAPlatforms against go-xla.
const GoXLAReleases = "gomlx/pjrt-cpu-binaries"

// GoXLAPlatforms returns the platforms, as GOOS_GOARCH, for which go-xla v0.1.4's installer publishes a PJRT CPU
// plugin (installer.CPUSupportedPlatforms).
func GoXLAPlatforms() []string {
	return []string{"linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64"}
}
