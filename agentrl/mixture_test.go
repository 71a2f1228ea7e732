package agentrl

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// formatPass is 12.6's per-format metric, as its notebook writes it: a step's batch pass rate on single-turn
// (single) or multi-turn tasks, NaN when the step drew none.
func formatPass(single bool) MetricFunc {
	return func(s StepBatch) float64 {
		episodes, passed := 0, 0
		for i, t := range s.Trajs {
			if strings.Contains(s.Tasks[i].Issue, "\n") == single {
				episodes++
				if t.Info.Submitted && t.Info.HiddenPass {
					passed++
				}
			}
		}
		if episodes == 0 {
			return math.NaN()
		}
		return float64(passed) / float64(episodes)
	}
}

// TestMixtureMetricsLeaveTheRun checks that 12.6's per-format pass metrics (WithMetric) leave its mixture run
// bit-identical (policy, history, episode log), and that they split each step's pass rate: the single-turn
// share of the step's episodes weighs the two rates into the step's PassRate.
func TestMixtureMetricsLeaveTheRun(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 4, 2, 3
	const steps = 2
	mixed := append([]Task(nil), train...)
	for _, task := range train {
		mixed = append(mixed, SingleTurn(task))
	}
	factory := EnvFactory(func() (Env, error) {
		return NewMixedTurnEnv(cfg.MaxTurns, must(cfg.Reward.Func()), cfg.MaxEdits)
	})
	plain := must(trainedRun(base, tok, mixed, cfg, steps, factory))
	singleShare := MetricFunc(func(s StepBatch) float64 {
		n := 0.0
		for _, task := range s.Tasks {
			if strings.Contains(task.Issue, "\n") {
				n++
			}
		}
		return n / float64(len(s.Tasks))
	})
	measured := must(trainedRun(base, tok, mixed, cfg, steps, factory,
		WithMetric("single-turn pass", formatPass(true)), WithMetric("multi-turn pass", formatPass(false)),
		WithMetric("single-turn share", singleShare)))
	m := measured.Metrics
	measured.Metrics = nil
	if !bytes.Equal(runBytes(t, plain), runBytes(t, measured)) {
		t.Fatal("the metrics changed the run")
	}
	for k, h := range measured.History {
		share, single, multi := m["single-turn share"][k], m["single-turn pass"][k], m["multi-turn pass"][k]
		var got float64
		switch share {
		case 0:
			got = multi
		case 1:
			got = single
		default:
			got = share*single + (1-share)*multi
		}
		if math.Abs(got-h.PassRate) > 1e-12 {
			t.Errorf("step %d: single-turn share %.2f × pass %.3f and multi-turn pass %.3f make %.3f, PassRate %.3f",
				k, share, single, multi, got, h.PassRate)
		}
	}
}

// TestLogTaskJoinsEpisodes checks that the LogTask of a GRPO run that logs its episodes joins its episode log back to each step's episodes:
// step k's log entry i is the terminal info of the step's episode LogTask[k][i], every episode logged once.
func TestLogTaskJoinsEpisodes(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 4, 3
	const steps = 3
	var sampled [][]Info // each step's episodes' infos, in the step's order
	record := MetricFunc(func(s StepBatch) float64 {
		infos := make([]Info, len(s.Trajs))
		for i, tr := range s.Trajs {
			infos[i] = tr.Info
		}
		sampled = append(sampled, infos)
		return 0
	})
	run := must(trainedRun(base, tok, train, cfg, steps, nil, WithMetric("record", record)))
	logs, err := LogByStep(run.History, run.Log)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := LogByStep(run.History, run.LogTask)
	if err != nil {
		t.Fatal(err)
	}
	for k := range logs {
		seen := make([]bool, len(sampled[k]))
		for i, task := range tasks[k] {
			if task < 0 || task >= len(seen) || seen[task] {
				t.Fatalf("step %d: log entry %d names episode %d (of %d, or again)", k, i, task, len(seen))
			}
			seen[task] = true
			if logs[k][i] != sampled[k][task] {
				t.Errorf("step %d: log entry %d is %+v, its episode %d ended with %+v", k, i, logs[k][i], task, sampled[k][task])
			}
		}
	}
}
