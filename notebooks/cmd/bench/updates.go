package main

import (
	"fmt"
	"time"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// recorded is one training step's update input: its collated batch and its per-token advantages.
type recorded struct {
	batch agentrl.Batch
	adv   [][]float32
}

// updateLayouts trains steps GRPO steps of the chapter's default run from its base agent (made, or loaded from the
// store) with padded updates, keeping each step's batch, and then replays those batches on fresh copies of the base
// agent under each update layout, one after the other in this process, printing for each the update graphs the
// process compiled for it (shapes: the padded ones while recording) and the time of their first calls, the steady
// time per update of the replay, and its executed/needed token positions (gomlxmodel.UpdatePositions). The batches
// are the chapter's workload; replaying the same ones makes the layouts' times comparable. With the compiled-graph
// cache on (gomlxmodel.XLACacheEnv), first calls load graphs instead of compiling them.
func updateLayouts(steps int) error {
	ch, base, err := chapterBase()
	if err != nil {
		return err
	}
	cfg := agentrl.DefaultRLConfig()
	batches, err := record(base, ch, cfg, steps)
	if err != nil {
		return err
	}
	fmt.Printf("%d GRPO updates of the default run (steps 0–%d), replayed from the base agent\n", len(batches), len(batches)-1)
	fmt.Printf("%-7s | %6s | %10s | %10s | %s\n", "layout", "shapes", "compile", "per update", "executed/needed token positions")
	for _, layout := range []struct {
		name, kind string // the layout, and the kind of its PPO update graphs (gomlxmodel.CompileStatsByKind)
		mode       gomlxmodel.UpdatePacking
	}{{"padded", "update_ppo", gomlxmodel.PackingPadded}, {"packed", "update_ppo_packed", gomlxmodel.PackingPacked}} {
		prev := gomlxmodel.SetUpdatePacking(layout.mode)
		err := replay(layout.name, layout.kind, base, batches, cfg)
		gomlxmodel.SetUpdatePacking(prev)
		if err != nil {
			return err
		}
	}
	return nil
}

// record samples and trains steps steps of GRPO on a copy of base with padded updates (TrainRL's step written
// out: sample, group advantages, update) and returns each step's update input.
func record(base *gomlxmodel.Model, ch *ch12.Chapter, cfg agentrl.RLConfig, steps int) ([]recorded, error) {
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	prev := gomlxmodel.SetUpdatePacking(gomlxmodel.PackingPadded)
	defer gomlxmodel.SetUpdatePacking(prev)
	rng := agentrl.NewRNG(cfg.Seed)
	var out []recorded
	for k := range steps {
		trajs, _, err := agentrl.SampleStep(policy, nil, ch.Train, ch.Tok, cfg, rng)
		if err != nil {
			return nil, err
		}
		batch := agentrl.Collate(trajs, ch.Tok.PadID)
		adv := agentrl.BroadcastAdvantages(agentrl.ComputeAdvantages(batch.Rewards, cfg.GroupSize), batch.Mask())
		if _, err := agentrl.RLUpdate(policy, batch, adv, cfg, rng); err != nil {
			return nil, err
		}
		out = append(out, recorded{batch, adv})
		fmt.Printf("\rrecording the default run's batches: step %d/%d", k+1, steps)
	}
	fmt.Println()
	return out, nil
}

// replay applies the recorded updates in order to a fresh copy of base under the current update layout and prints
// one row of updateLayouts' table.
func replay(name, kind string, base *gomlxmodel.Model, batches []recorded, cfg agentrl.RLConfig) error {
	policy, err := base.Clone()
	if err != nil {
		return err
	}
	rng := agentrl.NewRNG(cfg.Seed)
	_, c0 := gomlxmodel.CompileStats()
	e0, f0 := gomlxmodel.UpdatePositions()
	start := time.Now()
	for _, r := range batches {
		if _, err := agentrl.RLUpdate(policy, r.batch, r.adv, cfg, rng); err != nil {
			return fmt.Errorf("%s update: %w", name, err)
		}
	}
	total := time.Since(start)
	_, c := gomlxmodel.CompileStats()
	e, f := gomlxmodel.UpdatePositions()
	steady := (total - (c - c0)) / time.Duration(len(batches))
	st := gomlxmodel.CompileStatsByKind()[kind]
	fmt.Printf("%-7s | %6d | %9.1fs | %8.0fms | %d/%d (%.2f×)\n", name, st.Graphs, st.Total.Seconds(),
		float64(steady.Microseconds())/1e3, e-e0, f-f0, ratio(e-e0, f-f0))
	return nil
}
