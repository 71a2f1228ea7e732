package bookreport

import "testing"

// setDeviations makes Evaluate and StaleDeviations read devs in place of KnownDeviations until the test ends.
func setDeviations(t *testing.T, devs map[string]Deviation) {
	known := deviations
	deviations = func() map[string]Deviation { return devs }
	t.Cleanup(func() { deviations = known })
}

// withoutKnownDeviations makes a test see the rules themselves, without our run's documented deviations.
func withoutKnownDeviations(t *testing.T) { setDeviations(t, nil) }
