package agentrl

import "math/rand/v2"

// NewRNG returns the explicit seeded generator every random choice of the package goes through (there is no global
// random state): a PCG source seeded with (seed, 0x9e3779b97f4a7c15).
func NewRNG(seed uint64) *rand.Rand { return rand.New(NewSource(seed)) }

// NewSource is the source of NewRNG(seed), for a caller that saves its state (rand.PCG's MarshalBinary) to resume
// a run.
func NewSource(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x9e3779b97f4a7c15) }
