package agentrl

import (
	"testing"
)

// BenchmarkSampleStep times the sampling of one GRPO step (SampleStep: the default RLConfig's 8 tasks × 8 episodes
// on the gym's training tasks, from a fresh seeded TinyAgent): each iteration samples the same episodes (the
// generator is reseeded). One untimed pass compiles every graph.
//
// Metric: exec/need, the decoders' executed token positions per position fed (Decoder padding).
func BenchmarkSampleStep(b *testing.B) {
	policy, train, tok, cfg := samplerWorkload(b)
	sampleWith(b, 1, policy, train, tok, cfg)
	var exec, need int64
	for b.Loop() {
		_, e, n := sampleWith(b, 1, policy, train, tok, cfg)
		exec, need = exec+e, need+n
	}
	b.ReportMetric(float64(exec)/float64(need), "exec/need")
}
