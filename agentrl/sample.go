package agentrl

import (
	"math"
	"math/rand/v2"
)

// SampleNext is arl.sample_next for one row: it draws a token from softmax(logits / temperature) with rng and
// returns it with its log-probability under that distribution. One rng draw per call.
func SampleNext(logits []float32, temperature float64, rng *rand.Rand) (int32, float32) {
	maxLogit := math.Inf(-1)
	for _, l := range logits {
		maxLogit = math.Max(maxLogit, float64(l))
	}
	var z float64
	for _, l := range logits {
		z += math.Exp((float64(l) - maxLogit) / temperature)
	}
	u := rng.Float64() * z
	pick := len(logits) - 1
	var acc float64
	for i, l := range logits {
		acc += math.Exp((float64(l) - maxLogit) / temperature)
		if u < acc {
			pick = i
			break
		}
	}
	logp := (float64(logits[pick])-maxLogit)/temperature - math.Log(z)
	return int32(pick), float32(logp)
}
