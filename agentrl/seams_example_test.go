package agentrl_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// tinySetup is what the seams' examples train: a tiny TinyAgent, the training tasks and a configuration of 2
// tasks × 2 episodes per step.
func tinySetup() (*gomlxmodel.Model, *agentrl.Tokenizer, []agentrl.Task, agentrl.RLConfig) {
	all, _ := agentrl.MakeTasks(agentrl.SplitAll)
	train, _ := agentrl.MakeTasks(agentrl.SplitTrain)
	tok := agentrl.BuildTokenizer(all)
	eng, err := gomlxmodel.NewEngine(gomlxmodel.EnvOptions()) // what the models compute on
	if err != nil {
		panic(err)
	}
	base, err := gomlxmodel.New(eng, gomlxmodel.Config{Vocab: tok.VocabSize(), MaxLen: agentrl.ContextLen, DModel: 16,
		Heads: 2, Layers: 1, MLP: 32}, 3)
	if err != nil {
		panic(err)
	}
	cfg := agentrl.DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 3
	return base, tok, train, cfg
}

// run trains g from base (RunLoop), its options applied.
func run(g agentrl.GRPO, base *gomlxmodel.Model, opts ...agentrl.RunOption) (*agentrl.Run, error) {
	g, err := g.With(opts...)
	if err != nil {
		return nil, err
	}
	return agentrl.RunLoop(g, base)
}

// Another advantage: only submitted episodes get one (12.7's masked truncation, simplified to a sign), with every
// episode logged as the chapter's runs log them.
func ExampleWithAdvantages() {
	base, tok, train, cfg := tinySetup()
	submittedOnly := agentrl.AdvantageFunc(func(s agentrl.StepBatch) ([][]float32, error) {
		adv := agentrl.ComputeAdvantages(s.Batch.Rewards, s.Cfg.GroupSize)
		for i, t := range s.Trajs {
			if !t.Info.Submitted {
				adv[i] = 0
			}
		}
		return agentrl.BroadcastAdvantages(adv, s.Batch.Mask()), nil
	})
	r, err := run(agentrl.GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 2, LogEpisodes: true}, base,
		agentrl.WithAdvantages(submittedOnly))
	fmt.Println(len(r.History), "steps,", len(r.Log), "episodes logged, error:", err)
	// Output: 2 steps, 8 episodes logged, error: <nil>
}

// A metric of one's own in the run's history: the share of each step's episodes sampled on a single-turn task
// (12.6's mixture marks them with a newline in the issue).
func ExampleWithMetric() {
	base, tok, train, cfg := tinySetup()
	mixed := append([]agentrl.Task{agentrl.SingleTurn(train[0]), agentrl.SingleTurn(train[1])}, train[2:]...)
	singleShare := agentrl.MetricFunc(func(s agentrl.StepBatch) float64 {
		n := 0.0
		for _, t := range s.Tasks {
			if strings.Contains(t.Issue, "\n") {
				n++
			}
		}
		return n / float64(len(s.Tasks))
	})
	r, err := run(agentrl.GRPO{Tasks: mixed, Tok: tok, Cfg: cfg, Steps: 2}, base,
		agentrl.WithMetric("single-turn share", singleShare))
	fmt.Println(len(r.Metrics["single-turn share"]), "values, error:", err)
	// Output: 2 values, error: <nil>
}

// A curriculum: the step cost ramps in, and a trained policy's run starts a fresh optimizer as the book's
// train_rl does.
func ExampleWithSchedule() {
	base, tok, train, cfg := tinySetup()
	cfg.Reward.StepPenalty = 0.3
	first, _ := run(agentrl.GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 2}, base,
		agentrl.WithSchedule(agentrl.RampedPenalty(cfg, 2)))
	second, err := run(agentrl.GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 1}, first.Policy, agentrl.FreshOptimizer())
	fmt.Println("Adam steps:", first.Policy.Steps(), "then", second.Policy.Steps(), "error:", err)
	// Output: Adam steps: 2 then 1 error: <nil>
}

// A critic the seams train: 12.2's turn-level GAE arm on a tiny run.
func ExampleWithCritic() {
	base, tok, train, cfg := tinySetup()
	critic, _ := gomlxmodel.NewCritic(base, 1)
	r, err := run(agentrl.GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 2}, base, agentrl.WithCritic(critic),
		agentrl.WithAdvantages(agentrl.CreditAdvantages{Scheme: "turn", Lambda: 0.95}))
	fmt.Println("trained critic in the run:", r.Critic != nil, "error:", err)
	// Output: trained critic in the run: true error: <nil>
}

// groupLoop is a loop of one's own as a Loop value: its fields are everything it reads besides the base model.
type groupLoop struct {
	Tasks []agentrl.Task
	Tok   *agentrl.Tokenizer
	Cfg   agentrl.RLConfig
	Steps int
}

func (l groupLoop) Plan() (int, uint64) { return l.Steps, l.Cfg.Seed }

func (l groupLoop) Start(base *gomlxmodel.Model) (*agentrl.Run, error) {
	policy, err := base.Clone()
	return &agentrl.Run{Policy: policy}, err
}

func (l groupLoop) Step(run *agentrl.Run, step int, rng *rand.Rand) error {
	trajs, _, err := agentrl.SampleStep(run.Policy, nil, l.Tasks, l.Tok, l.Cfg, rng)
	if err != nil {
		return err
	}
	batch := agentrl.Collate(trajs, l.Tok.PadID)
	adv := agentrl.ComputeAdvantages(batch.Rewards, l.Cfg.GroupSize)
	if _, err := agentrl.RLUpdate(run.Policy, batch, agentrl.BroadcastAdvantages(adv, batch.Mask()), l.Cfg, rng); err != nil {
		return err
	}
	run.History = append(run.History, agentrl.StepStats{Step: step, Stats: agentrl.BehaviorStats(trajs)})
	return nil
}

// A loop of one's own: a Loop value, which RunLoop trains from a base model (and the runs package stores and
// resumes).
func ExampleRunLoop() {
	base, tok, train, cfg := tinySetup()
	r, err := agentrl.RunLoop(groupLoop{Tasks: train, Tok: tok, Cfg: cfg, Steps: 2}, base)
	fmt.Println(len(r.History), "steps, error:", err)
	// Output: 2 steps, error: <nil>
}
