package main

import (
	"slices"
	"testing"

	"github.com/agentrl-go/agentrl/internal/pjrt"
	"github.com/gomlx/go-xla/pkg/installer"
)

// TestMirror: what internal/pjrt repeats of go-xla's installer, for kernelsetup to plan without linking it, is
// what the installer this program runs says.
func TestMirror(t *testing.T) {
	if got := pjrt.GoXLAPlatforms(); !slices.Equal(got, installer.CPUSupportedPlatforms) {
		t.Errorf("pjrt.GoXLAPlatforms() = %q, go-xla's installer serves %q", got, installer.CPUSupportedPlatforms)
	}
	if pjrt.GoXLAReleases != installer.BinaryCPUReleasesRepo {
		t.Errorf("pjrt.GoXLAReleases = %q, go-xla's installer downloads from %q", pjrt.GoXLAReleases,
			installer.BinaryCPUReleasesRepo)
	}
}
