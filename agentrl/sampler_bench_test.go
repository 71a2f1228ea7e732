package agentrl

import (
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// BenchmarkSamplerSchedules times the sampling of one GRPO step (SampleStep: the default RLConfig's 8 tasks × 8
// episodes on the gym's training tasks, from a fresh seeded TinyAgent) under the decoder schedule of earlier
// releases (ScheduleLegacy: "old") and the default (ScheduleAuto: "new"), and on XLA also under the opt-in
// ScheduleSplit ("split"), in one run: each iteration samples the same episodes (the generator is reseeded)
// under each schedule in turn, alternating which goes first. One untimed pass compiles every graph.
//
// Metrics: old-ms, new-ms, split-ms (wall per sampling), new/old (and split/old) their ratio, and each
// schedule's executed/needed token positions (Decoder padding).
func BenchmarkSamplerSchedules(b *testing.B) {
	policy, train, tok, cfg := samplerWorkload(b)
	scheds := []gomlxmodel.DecoderSchedule{gomlxmodel.ScheduleLegacy, gomlxmodel.ScheduleAuto}
	names := []string{"old", "new"}
	e0, _ := gomlxmodel.DecodePositions()
	sampleWith(b, gomlxmodel.ScheduleLegacy, 1, policy, train, tok, cfg)
	e1, _ := gomlxmodel.DecodePositions()
	sampleWith(b, gomlxmodel.ScheduleAuto, 1, policy, train, tok, cfg)
	if e2, _ := gomlxmodel.DecodePositions(); e2-e1 == e1-e0 { // XLA: Auto runs the legacy shapes
		scheds, names = append(scheds, gomlxmodel.ScheduleSplit), append(names, "split")
		sampleWith(b, gomlxmodel.ScheduleSplit, 1, policy, train, tok, cfg)
	}
	wall := make([]time.Duration, len(scheds))
	exec, need := make([]int64, len(scheds)), make([]int64, len(scheds))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k := range scheds {
			j := (k + i) % len(scheds)
			start := time.Now()
			_, e, n := sampleWith(b, scheds[j], 1, policy, train, tok, cfg)
			wall[j] += time.Since(start)
			exec[j], need[j] = exec[j]+e, need[j]+n
		}
	}
	for j, name := range names {
		b.ReportMetric(float64(wall[j].Milliseconds())/float64(b.N), name+"-ms/op")
		b.ReportMetric(float64(exec[j])/float64(need[j]), name+"-exec/need")
		if j > 0 {
			b.ReportMetric(wall[j].Seconds()/wall[0].Seconds(), name+"/old")
		}
	}
}
