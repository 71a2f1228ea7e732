package agentrl_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// tinySetup is what the seams' examples train: a tiny TinyAgent, the training tasks, a temporary result store and
// a configuration of 2 tasks × 2 episodes per step.
func tinySetup() (*gomlxmodel.Model, *agentrl.Tokenizer, []agentrl.Task, *agentrl.Store, agentrl.RLConfig, func()) {
	all, _ := agentrl.MakeTasks(agentrl.SplitAll)
	train, _ := agentrl.MakeTasks(agentrl.SplitTrain)
	tok := agentrl.BuildTokenizer(all)
	base, err := gomlxmodel.New(gomlxmodel.Config{Vocab: tok.VocabSize(), MaxLen: agentrl.ContextLen, DModel: 16,
		Heads: 2, Layers: 1, MLP: 32}, 3)
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "agentrl-example-")
	store, err := agentrl.OpenStore(dir)
	if err != nil {
		panic(err)
	}
	store.Notices = io.Discard // the examples' "cache:" and "progress:" lines
	cfg := agentrl.DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 3
	return base, tok, train, store, cfg, func() { os.RemoveAll(dir) }
}

// Another advantage: only submitted episodes get one (12.7's masked truncation, simplified to a sign), stored and
// resumable like the chapter's runs.
func ExampleWithAdvantages() {
	base, tok, train, store, cfg, done := tinySetup()
	defer done()
	submittedOnly := func(s agentrl.StepBatch) ([][]float32, error) {
		adv := agentrl.ComputeAdvantages(s.Batch.Rewards, s.Cfg.GroupSize)
		for i, t := range s.Trajs {
			if !t.Info.Submitted {
				adv[i] = 0
			}
		}
		return agentrl.BroadcastAdvantages(adv, s.Batch.Mask()), nil
	}
	run, err := agentrl.TrainedRun(store, base, tok, train, cfg, 2, "", nil, agentrl.WithAdvantages(submittedOnly))
	fmt.Println(len(run.History), "steps,", len(run.Log), "episodes logged, error:", err)
	// Output: 2 steps, 8 episodes logged, error: <nil>
}

// A metric of one's own in the run's history: the share of each step's episodes sampled on a single-turn task
// (12.6's mixture marks them with a newline in the issue).
func ExampleWithMetric() {
	base, tok, train, store, cfg, done := tinySetup()
	defer done()
	mixed := append([]agentrl.Task{agentrl.SingleTurn(train[0]), agentrl.SingleTurn(train[1])}, train[2:]...)
	singleShare := func(s agentrl.StepBatch) float64 {
		n := 0.0
		for _, t := range s.Tasks {
			if strings.Contains(t.Issue, "\n") {
				n++
			}
		}
		return n / float64(len(s.Tasks))
	}
	run, err := agentrl.TrainedRun(store, base, tok, mixed, cfg, 2, "", nil, agentrl.WithMetric("single-turn share", singleShare))
	fmt.Println(len(run.Metrics["single-turn share"]), "values, error:", err)
	// Output: 2 values, error: <nil>
}

// A curriculum: the step cost ramps in, and a trained policy's run starts a fresh optimizer as the book's
// train_rl does.
func ExampleWithSchedule() {
	base, tok, train, store, cfg, done := tinySetup()
	defer done()
	cfg.Reward.StepPenalty = 0.3
	first, _ := agentrl.TrainedRun(store, base, tok, train, cfg, 2, "", nil, agentrl.WithSchedule(agentrl.RampedPenalty(cfg, 2)))
	second, err := agentrl.TrainedRun(store, first.Policy, tok, train, cfg, 1, "", nil, agentrl.FreshOptimizer())
	fmt.Println("Adam steps:", first.Policy.Steps(), "then", second.Policy.Steps(), "error:", err)
	// Output: Adam steps: 2 then 1 error: <nil>
}

// A critic the seams train: 12.2's turn-level GAE arm on a tiny run.
func ExampleWithCritic() {
	base, tok, train, store, cfg, done := tinySetup()
	defer done()
	critic, _ := gomlxmodel.NewCritic(base, 1)
	adv, _ := agentrl.CreditAdvantages("turn", 0.95)
	run, err := agentrl.TrainedRun(store, base, tok, train, cfg, 2, "", nil, agentrl.WithCritic(critic),
		agentrl.WithAdvantages(adv, "turn", 0.95))
	fmt.Println("trained critic stored:", run.Critic != nil, "error:", err)
	// Output: trained critic stored: true error: <nil>
}

// A loop of one's own, stored and resumable: an interrupt saves its progress and the next call goes on from it.
func ExampleResumableRun() {
	base, tok, train, store, cfg, done := tinySetup()
	defer done()
	run, err := agentrl.ResumableRun(store, agentrl.Key("my_loop", cfg), agentrl.Loop{Name: "my_loop", Steps: 2, Seed: cfg.Seed,
		Start: func() (*agentrl.Run, error) {
			policy, err := base.Clone()
			return &agentrl.Run{Policy: policy}, err
		},
		Step: func(run *agentrl.Run, step int, rng *rand.Rand) error {
			trajs, _, err := agentrl.SampleStep(run.Policy, nil, train, tok, cfg, rng)
			if err != nil {
				return err
			}
			batch := agentrl.Collate(trajs, tok.PadID)
			adv := agentrl.ComputeAdvantages(batch.Rewards, cfg.GroupSize)
			if _, err := agentrl.RLUpdate(run.Policy, batch, agentrl.BroadcastAdvantages(adv, batch.Mask()), cfg, rng); err != nil {
				return err
			}
			run.History = append(run.History, agentrl.StepStats{Step: step, Stats: agentrl.BehaviorStats(trajs)})
			return nil
		}})
	fmt.Println(len(run.History), "steps, error:", err)
	// Output: 2 steps, error: <nil>
}
