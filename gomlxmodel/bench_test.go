package gomlxmodel

import (
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs fn b.N times and also reports the CPU time per operation (cpu-ms/op), which is less
// sensitive than wall time to other processes on a shared machine.
func loop(b *testing.B, fn func()) {
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		fn()
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// Benchmarks at TinyAgent's real size (DefaultConfig(150)) and the shapes of the issue; the PyTorch
// reference in cmd/pytorchref/bench.py measures the same model and shapes. Run both with
// cmd/pytorchref/compare.sh, which prints the ratios.

const (
	benchVocab = 150
	benchB     = 64
	benchT     = 128
)

func benchModel(b *testing.B) (*Model, *rand.Rand) {
	m, err := New(testEng(), DefaultConfig(benchVocab), 0)
	if err != nil {
		b.Fatal(err)
	}
	return m, rand.New(rand.NewPCG(0, 1))
}

// BenchmarkForward: logits for a [64, 128] batch.
func BenchmarkForward(b *testing.B) {
	m, rng := benchModel(b)
	ids := randomIDs(rng, benchB*benchT, benchVocab)
	if _, err := m.Logits(ids, benchB, benchT); err != nil { // compile outside the timing
		b.Fatal(err)
	}
	loop(b, func() {
		if _, err := m.Logits(ids, benchB, benchT); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkUpdate: one PPO training step (forward, clipped surrogate with token_mean, backward,
// global-norm clipping, Adam) on a [64, 128] batch.
func BenchmarkUpdate(b *testing.B) {
	m, rng := benchModel(b)
	batch := makeBatch(rng, m.Config(), benchB, benchT)
	lc := LossConfig{Kind: "ppo", ClipEps: 0.2, Aggregation: "token_mean", LR: 1e-4, MaxGradNorm: 1}
	if _, err := m.Update(batch, lc); err != nil {
		b.Fatal(err)
	}
	loop(b, func() {
		if _, err := m.Update(batch, lc); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkUpdateLockedThread is BenchmarkUpdate called from a goroutine locked to its OS thread, as
// a GoNB cell's var initializers are (see execUnlocked); the two should take the same time.
func BenchmarkUpdateLockedThread(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	BenchmarkUpdate(b)
}

// BenchmarkDecodeStep: one KV-cache decode step for 64 rows, each with 127 cached tokens (the
// cache is rewound after each step, so every step sees the same context length).
func BenchmarkDecodeStep(b *testing.B) {
	m, rng := benchModel(b)
	d, err := m.NewDecoder(benchB)
	if err != nil {
		b.Fatal(err)
	}
	const ctxLen = benchT - 1
	for row := range benchB {
		d.Feed(row, randomIDs(rng, ctxLen, benchVocab))
	}
	if _, err := d.Step(); err != nil {
		b.Fatal(err)
	}
	step := func() {
		for row := range benchB {
			d.Feed(row, []int32{int32(rng.IntN(benchVocab))})
		}
		if _, err := d.Step(); err != nil {
			b.Fatal(err)
		}
		for row := range benchB {
			d.lens[row] = ctxLen
		}
	}
	step() // compile outside the timing
	loop(b, step)
}
