package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/chart"
	"github.com/agentrl-go/agentrl/chart/nbdisplay"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

func must[T any](v T, err error) T { return ch12.Must(v, err) }

func must2[T, U any](t T, u U, err error) (T, U) { return t, ch12.Must(u, err) }

var ch = must(ch12.Setup())

var tok, trainTasks, heldoutTasks, store = ch.Tok, ch.Train, ch.HeldOutTasks, ch.Store

func rlBase() *gomlxmodel.Model { return must(ch.Base()) }

func heldOut(policy *gomlxmodel.Model, cfg agentrl.RLConfig) agentrl.Stats {
	return must(ch.HeldOut(policy, cfg))
}

// PerCallRewards is per_call_rewards: token rewards [B][T-1] with -stepPenalty on the last token of every call
// and the hidden-test verdict on the episode's last policy token.
func PerCallRewards(trajs []agentrl.Trajectory, mask [][]float32, stepPenalty float64) [][]float32 {
	verdict := make([]float32, len(trajs))
	for b, t := range trajs {
		if t.Info.Submitted && t.Info.HiddenPass {
			verdict[b] = 1
		}
	}
	rewards := agentrl.OutcomeRewards(verdict, mask)
	for b, m := range mask {
		for j := range m {
			if m[j] == 1 && (j+1 == len(m) || m[j+1] == 0) { // a call ends here
				rewards[b][j] -= float32(stepPenalty)
			}
		}
	}
	return rewards
}

// MaskedWhiten is masked_whiten: x normalized to mean 0 and standard deviation 1 over the positions where mask
// is 1 (one mean and std for the whole batch), and zero elsewhere.
func MaskedWhiten(x, mask [][]float32) [][]float32 {
	mean := agentrl.MaskedMean(x, mask)
	sq := agentrl.Zeros(len(x), len(x[0]))
	for b := range x {
		for j := range x[b] {
			sq[b][j] = float32((float64(x[b][j]) - mean) * (float64(x[b][j]) - mean))
		}
	}
	std := math.Sqrt(agentrl.MaskedMean(sq, mask))
	out := agentrl.Zeros(len(x), len(x[0]))
	for b := range x {
		for j := range x[b] {
			out[b][j] = float32((float64(x[b][j])-mean)/(std+1e-6)) * mask[b][j]
		}
	}
	return out
}

// Declarations only: this cell computes nothing. Later cells use stepCost, costCfg, WarmCritic, warmedCritic.
const stepCost = 0.05

var costCfg = func() agentrl.RLConfig {
	cfg := agentrl.DefaultRLConfig()
	cfg.Reward.StepPenalty = stepCost
	return cfg
}()

// WarmCritic is 12.2's critic warm-up: a critic built on a copy of base's trunk, regressed for 60 Adam steps
// (lr 1e-3, 64 episodes drawn with replacement) on the returns-to-go of base-agent episodes (three
// SampleGroups batches over tasks, seeds 0-2) under cfg's step penalty. Its Adam state is then dropped, so each
// arm that copies it starts a fresh optimizer, as the book's vopt does.
func WarmCritic(base *gomlxmodel.Model, tasks []agentrl.Task, tok *agentrl.Tokenizer, cfg agentrl.RLConfig) (*gomlxmodel.Critic, error) {
	var warmTrajs []agentrl.Trajectory
	for seed := range 3 {
		trajs, err := agentrl.SampleGroups(base, nil, tasks, tok, cfg, agentrl.NewRNG(uint64(seed)))
		if err != nil {
			return nil, fmt.Errorf("critic warm-up: %w", err)
		}
		warmTrajs = append(warmTrajs, trajs...)
	}
	warm := agentrl.Collate(warmTrajs, tok.PadID)
	warmReturns := agentrl.ReturnsToGo(PerCallRewards(warmTrajs, warm.Mask(), cfg.Reward.StepPenalty), warm.Mask())
	critic, err := gomlxmodel.NewCritic(base, 1)
	if err != nil {
		return nil, err
	}
	gen := agentrl.NewRNG(1)
	for range 60 {
		idx := make([]int, 64)
		for i := range idx {
			idx[i] = gen.IntN(len(warmTrajs))
		}
		returns := agentrl.SelectRows(warmReturns, idx)
		if _, err := agentrl.ValueStep(critic, warm.Select(idx), returns, returns, 0, 1e-3); err != nil {
			return nil, fmt.Errorf("critic warm-up: %w", err)
		}
	}
	critic.ResetOptimizer() // the warm-up's Adam stays behind: each arm's critic starts a fresh one
	return critic, nil
}

// warmedCritic is WarmCritic's critic for the base agent, computed once and stored (keyed by WarmCritic's code).
func warmedCritic() *gomlxmodel.Critic { return must(ch.Critic(costCfg, WarmCritic)) }

// CriticAdvantages is train_credit's advantage computation on one step's episodes trajs (batch is their Collate):
// per-call rewards under stepPenalty, the critic's values, GAE at the token ("token") or the turn ("turn") level
// with γ = 1 and λ = lambda, whitened over the batch's policy tokens. It also returns what the critic's regression
// step reads: the values and the returns-to-go. It leaves the critic as it is. scheme must be "token" or "turn" and
// lambda in [0, 1] (CreditAdvantages.Check).
func CriticAdvantages(critic *gomlxmodel.Critic, trajs []agentrl.Trajectory, batch agentrl.Batch, stepPenalty float64,
	scheme string, lambda float64) (adv, values, returns [][]float32, err error) {
	mask, rewards := batch.Mask(), PerCallRewards(trajs, batch.Mask(), stepPenalty)
	values, err = agentrl.CriticValues(critic, batch) // [B][T-1]
	if err != nil {
		return nil, nil, nil, err
	}
	if scheme == "token" {
		adv, _ = agentrl.GAEAdvantages(rewards, values, mask, 1, lambda)
	} else {
		adv = agentrl.TurnAdvantages(rewards, values, mask, batch.Turns(), 1, lambda)
	}
	return MaskedWhiten(adv, mask), values, agentrl.ReturnsToGo(rewards, mask), nil
}

// TrainCredit is train_credit as a Loop: GRPO's loop with the advantage computation swapped for a critic-based one,
// per-call rewards, critic values, GAE at the token ("token") or the turn ("turn") level with λ = Lambda,
// whitening, the same clipped update, and one critic step (lr 1e-3). The run starts from copies of the base model
// and of Critic (the warmed-up critic), with Cfg; per-call rewards hold the step penalty and the verdict only, so
// a reward with other terms is refused.
type TrainCredit struct {
	Tasks  []agentrl.Task
	Tok    *agentrl.Tokenizer
	Cfg    agentrl.RLConfig
	Steps  int
	Scheme string
	Lambda float64
	Critic *gomlxmodel.Critic
}

// Plan is tc's steps and seed.
func (tc TrainCredit) Plan() (int, uint64) { return tc.Steps, tc.Cfg.Seed }

// Check returns an error, naming what to change, when tc cannot run.
func (tc TrainCredit) Check() error {
	var errs []error
	if err := (agentrl.CreditAdvantages{Scheme: tc.Scheme, Lambda: tc.Lambda}).Check(); err != nil {
		errs = append(errs, err)
	}
	if tc.Critic == nil {
		errs = append(errs, errors.New("train_credit: the critic is nil: pass the warmed-up critic (WarmCritic)"))
	}
	if r := tc.Cfg.Reward; r.FreeCalls != 0 || r.WrongSubmit != 0 || r.InvalidPenalty != 0 || r.Unsubmitted != 0 {
		errs = append(errs, fmt.Errorf("train_credit: per-call rewards hold the step penalty and the verdict only, "+
			"not this reward's other terms (%+v)", r))
	}
	if err := (agentrl.GRPO{Tasks: tc.Tasks, Tok: tc.Tok, Cfg: tc.Cfg, Steps: tc.Steps}).Check(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Start copies base and the critic.
func (tc TrainCredit) Start(base *gomlxmodel.Model) (*agentrl.Run, error) {
	if err := tc.Check(); err != nil {
		return nil, err
	}
	policy, err := base.Clone()
	if err != nil {
		return nil, err
	}
	critic, err := tc.Critic.Clone()
	return &agentrl.Run{Policy: policy, Critic: critic}, err
}

// Step is one step of train_credit: sample the step's episodes, compute their advantages with the critic
// (CriticAdvantages), update the policy, then take the critic's regression step on the values and returns-to-go
// the advantages came from.
func (tc TrainCredit) Step(run *agentrl.Run, step int, g *rand.Rand) error {
	if run.Base != nil {
		run.Policy.SetAnchor(run.Base) // cfg.KLCoef's reference, also after a resume
	}
	trajs, _, err := agentrl.SampleStep(run.Policy, agentrl.EnvFactoryOf(tc.Cfg), tc.Tasks, tc.Tok, tc.Cfg, g)
	if err != nil {
		return err
	}
	batch := agentrl.Collate(trajs, tc.Tok.PadID)
	adv, values, returns, err := CriticAdvantages(run.Critic, trajs, batch, tc.Cfg.Reward.StepPenalty, tc.Scheme, tc.Lambda)
	if err != nil {
		return err
	}
	if _, err := agentrl.RLUpdate(run.Policy, batch, adv, tc.Cfg, g); err != nil {
		return err
	}
	if _, err := agentrl.ValueStep(run.Critic, batch, values, returns, 0, 1e-3); err != nil {
		return err
	}
	run.History = append(run.History, agentrl.StepStats{Step: step, Stats: agentrl.BehaviorStats(trajs)})
	return nil
}

// creditRun trains (or loads) one arm: "outcome (GRPO)", "token GAE" or "turn GAE". The critic arms are
// TrainCredit's loop from the warmed-up critic; the outcome arm is GRPO's (ch.Run).
func creditRun(name string) *agentrl.Run {
	switch name {
	case "token GAE", "turn GAE":
		scheme := map[string]string{"token GAE": "token", "turn GAE": "turn"}[name]
		return must(ch.RunLoop(TrainCredit{Tasks: trainTasks, Tok: tok, Cfg: costCfg, Steps: ch12.Steps,
			Scheme: scheme, Lambda: 0.95, Critic: warmedCritic()}))
	}
	return must(ch.Run(costCfg))
}

// explainedVariance scores critic on policy's held-out episodes (16 per task, seed 7): its values against the
// returns-to-go of PerCallRewards under the step cost, over the policy tokens.
func explainedVariance(policy *gomlxmodel.Model, critic *gomlxmodel.Critic) float64 {
	cfg := costCfg
	cfg.GroupSize = 16
	trajs := must(agentrl.SampleGroups(policy, nil, heldoutTasks, tok, cfg, agentrl.NewRNG(7)))
	batch := agentrl.Collate(trajs, tok.PadID)
	mask := batch.Mask()
	returns := agentrl.ReturnsToGo(PerCallRewards(trajs, mask, stepCost), mask)
	return agentrl.ExplainedVariance(must(agentrl.CriticValues(critic, batch)), returns, mask)
}

func cell2() {
	fmt.Printf("vocabulary %d tokens | %d training tasks, %d held-out | TinyAgent with %d parameters\n",
		tok.VocabSize(), len(trainTasks), len(heldoutTasks), rlBase().NumParams())
}

func cell5() {
	fmt.Printf("critic with %d parameters warmed up\n", warmedCritic().NumParams())
}

func cell7() {
	for _, name := range []string{"outcome (GRPO)", "token GAE", "turn GAE"} {
		run := creditRun(name)
		s := heldOut(run.Policy, costCfg)
		late := func(f func(agentrl.Stats) float64) float64 {
			total := 0.0
			for _, h := range run.History[30:] {
				total += f(h.Stats)
			}
			return total / 10
		}
		fmt.Printf("%-15s train pass, steps 30-39 %.2f | tests %.2f | held-out: pass %.3f | reads %.2f | tests %.2f | edits %.2f | turns %.2f\n",
			name, late(func(s agentrl.Stats) float64 { return s.PassRate }), late(func(s agentrl.Stats) float64 { return s.Tests }),
			s.PassRate, s.Reads, s.Tests, s.Edits, s.Turns)
	}
}

func cell9() {
	ch12.Check(ch.Printed("12.2/explained variance", func(w io.Writer) error { // stored, keyed by this code and the policies
		token, turn := creditRun("token GAE"), creditRun("turn GAE")
		_, err := fmt.Fprintf(w, "critic explained variance on held-out episodes: warmed-up %.3f | token GAE %.3f | turn GAE %.3f\n",
			explainedVariance(rlBase(), warmedCritic()), explainedVariance(token.Policy, token.Critic), explainedVariance(turn.Policy, turn.Critic))
		return err
	}, creditRun("token GAE").Policy, creditRun("turn GAE").Policy))
}

func cell10() {
	run := creditRun("turn GAE")
	trajs := must(agentrl.SampleGroups(run.Policy, nil, heldoutTasks, tok, costCfg, agentrl.NewRNG(7)))
	// The first successful episode that reads, edits, tests and submits; failing that, the first that reads and passes.
	pick := -1
	for i, t := range trajs {
		if !(t.Info.Submitted && t.Info.HiddenPass && t.Info.NReads == 1) {
			continue
		}
		if pick < 0 {
			pick = i
		}
		if t.Info.NTests == 1 && t.Info.NTurns == 4 {
			pick = i
			break
		}
	}
	if pick < 0 {
		fmt.Println("no successful reading episode among the held-out samples")
		return
	}
	t := trajs[pick]
	batch := agentrl.Collate([]agentrl.Trajectory{t}, tok.PadID)
	mask := batch.Mask()
	rewards := PerCallRewards([]agentrl.Trajectory{t}, mask, stepCost)
	values := must(agentrl.CriticValues(run.Critic, batch))
	calls := agentrl.TurnCredit(rewards[0], values[0], mask[0], batch.Turns()[0], 1, 0.95)
	tokenAdv, _ := agentrl.GAEAdvantages(rewards, values, mask, 1, 0.95)
	names := agentrl.CallTexts(t, tok)
	series := []chart.Series{{Name: "reward r_k"}, {Name: "value V(s_k)"}, {Name: "TD error δ_k"}, {Name: "advantage A_k"}}
	for k, c := range calls {
		for i, v := range []float64{c.Reward, c.Value, c.TD, c.Advantage} {
			series[i].Values = append(series[i].Values, v)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for j, m := range mask[0] {
			if m == 1 && batch.Turns()[0][j] == c.Turn {
				lo, hi = min(lo, float64(tokenAdv[0][j])), max(hi, float64(tokenAdv[0][j]))
			}
		}
		fmt.Printf("call %d %-22s r %+.3f | V %+.3f | δ %+.3f | A %+.3f | token-GAE spread inside the call %.3f\n",
			k, names[k], c.Reward, c.Value, c.TD, c.Advantage, hi-lo)
	}
	fig := chart.Bars("Figure 12.1: turn-level credit on one successful held-out episode (turn-GAE policy)", names, series)
	if err := nbdisplay.Display(fig); err != nil {
		panic(err)
	}
}

func main() {}
