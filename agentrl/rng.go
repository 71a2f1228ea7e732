package agentrl

import "math/rand/v2"

// NewRNG returns the explicit seeded generator every random choice of the package goes through (there is no global
// random state): a PCG source seeded with (seed, 0x9e3779b97f4a7c15).
func NewRNG(seed uint64) *rand.Rand { return rand.New(newPCG(seed)) }

// newPCG is the source of NewRNG(seed), kept apart so that its state can be saved.
func newPCG(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x9e3779b97f4a7c15) }

// pcgState is src's state, for checkpoint.RNG.
func pcgState(src *rand.PCG) []byte {
	state, err := src.MarshalBinary()
	if err != nil {
		panic(err) // PCG's MarshalBinary cannot fail
	}
	return state
}
