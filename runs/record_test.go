package runs

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
	"github.com/agentrl-go/agentrl/store"
)

// TestStepRecordNamesWhatDiffers checks that a step's record is made of the four named parts, and that a change
// of one thing the run holds changes its part alone, which the store's line then names: the weights, the
// optimizer moments, the statistics and episode log, or the generator's state.
func TestStepRecordNamesWhatDiffers(t *testing.T) {
	cfg := gomlxmodel.DefaultConfig(16)
	cfg.Layers, cfg.DModel, cfg.Heads, cfg.MLP = 1, 32, 2, 64
	newModel := func(seed int64) *gomlxmodel.Model {
		t.Helper()
		m, err := gomlxmodel.New(testEngine(), cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	stepped := newModel(1)
	ids, mask := []int32{1, 2, 3, 4, 5, 6, 7, 8}, []float32{1, 1, 1, 1, 1, 1}
	lc := gomlxmodel.LossConfig{Kind: gomlxmodel.LossReinforce, Aggregation: agentrl.TokenMean, LR: 1e-3}
	if _, err := stepped.Update(gomlxmodel.UpdateBatch{B: 2, T: 4, IDs: ids, Mask: mask, OldLogp: make([]float32, 6),
		Adv: mask}, lc); err != nil {
		t.Fatal(err)
	}
	clone := func() *gomlxmodel.Model {
		t.Helper()
		m, err := stepped.Clone()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	reset := clone() // the same weights, a fresh optimizer
	reset.ResetOptimizer()
	moved := clone() // the same optimizer, other weights
	if _, err := moved.CopyParams(newModel(2), func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	critic, err := gomlxmodel.NewCritic(stepped, 1)
	if err != nil {
		t.Fatal(err)
	}
	record := func(r *agentrl.Run, draws int) []byte {
		t.Helper()
		src := agentrl.NewSource(3)
		for range draws {
			src.Uint64()
		}
		rec, err := stepRecord(r, src)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	run := &agentrl.Run{Policy: stepped, History: []agentrl.StepStats{{Step: 0, Stats: agentrl.Stats{PassRate: 0.5}}},
		Log: []agentrl.Info{{Submitted: true, Stop: "submit"}}, LogTask: []int{0}, Metrics: map[string][]float64{"a": {1}}}
	want := record(run, 0)
	var names []string
	for line := range strings.Lines(string(want)) {
		name, _, _ := strings.Cut(line, "=")
		names = append(names, name)
	}
	if got := strings.Join(names, ", "); got != "weights, optimizer moments, statistics and episode log, generator state" {
		t.Fatalf("the record's parts are %s:\n%s", got, want)
	}
	if again := record(run, 0); !bytes.Equal(again, want) {
		t.Fatalf("the same run records differently:\n%s\n%s", want, again)
	}
	other := *run
	other.Log = append([]agentrl.Info{}, run.Log...)
	other.Log[0].NTests++
	metric := *run
	metric.Metrics = map[string][]float64{"a": {1}, "b": nil}
	for _, tc := range []struct {
		name  string
		run   *agentrl.Run
		draws int
		want  string
	}{
		{"other weights", &agentrl.Run{Policy: moved, History: run.History, Log: run.Log, LogTask: run.LogTask,
			Metrics: run.Metrics}, 0, "in weights"},
		{"a fresh optimizer", &agentrl.Run{Policy: reset, History: run.History, Log: run.Log, LogTask: run.LogTask,
			Metrics: run.Metrics}, 0, "in optimizer moments"},
		{"another episode log", &other, 0, "in statistics and episode log"},
		{"another metric", &metric, 0, "in statistics and episode log"},
		{"one more draw", run, 1, "in generator state"},
		{"a critic", &agentrl.Run{Policy: stepped, Critic: critic, History: run.History, Log: run.Log,
			LogTask: run.LogTask, Metrics: run.Metrics}, 0, "in optimizer moments, weights"},
	} {
		if got := store.RecordDiffers(want, record(tc.run, tc.draws)); got != tc.want {
			t.Errorf("%s: the records differ %q, want %q", tc.name, got, tc.want)
		}
	}
}
