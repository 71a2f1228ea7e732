package main

import (
	"fmt"
	"io"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
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

func cell2() {
	fmt.Printf("vocabulary %d tokens | %d training tasks, %d held-out | TinyAgent with %d parameters\n",
		tok.VocabSize(), len(trainTasks), len(heldoutTasks), rlBase().NumParams())
}

func cell3() {
	cfg := agentrl.DefaultRLConfig()
	trajs := must(agentrl.SampleGroups(rlBase(), nil, trainTasks[:2], tok, cfg, agentrl.NewRNG(0)))
	batch := agentrl.Collate(trajs, tok.PadID)
	advantages := make([]float32, batch.B)
	for i := range advantages {
		advantages[i] = 1
	}
	grad := must(rlBase().LogitGradAbsSum(batch.IDs, batch.B, batch.T, advantages, batch.ActionMask)) // [B*(T-1)]
	for _, code := range agentrl.Owners() {
		predicted, touched := 0, 0
		for j, owner := range batch.Owner { // owner of each predicted token, -1 on padding
			if agentrl.Owner(owner) == code {
				predicted++
				if grad[j] > 0 {
					touched++
				}
			}
		}
		fmt.Printf("%-9s predicted positions %4d | with gradient %4d\n", code, predicted, touched)
	}
	// What the counts must add up to: every predicted position has one owner, the policy's are the action mask, and
	// each of the 8 episodes of a task starts with the same prompt after the first token.
	positions, actions := 0, 0
	for _, t := range trajs {
		positions += len(t.IDs) - 1
		for _, m := range t.ActionMask {
			actions += int(m)
		}
	}
	fmt.Printf("16 episodes: %d predicted positions, %d in the action mask | prompt tokens of the two tasks: %d and %d\n",
		positions, actions, len(tok.Encode(trainTasks[0].Issue)), len(tok.Encode(trainTasks[1].Issue)))
}

func cell4() {
	// The sweep samples 480 episodes; its printed lines are stored (ch.Printed), keyed by this code.
	ch12.Check(ch.Printed("12.1/budget sweep", func(w io.Writer) error {
		for _, maxTurns := range []int{6, 12, 24} {
			cfg := agentrl.DefaultRLConfig()
			cfg.MaxTurns = maxTurns
			trajs := must(agentrl.SampleGroups(rlBase(), nil, trainTasks, tok, cfg, agentrl.NewRNG(1)))
			var policy, predicted, tokens, longest, overflow float64
			for _, t := range trajs {
				for _, m := range t.ActionMask {
					policy += float64(m)
				}
				predicted += float64(len(t.IDs) - 1)
				tokens += float64(len(t.IDs))
				longest = max(longest, float64(len(t.IDs)))
				if t.Info.Stop == agentrl.StopTruncated {
					overflow++
				}
			}
			n := float64(len(trajs))
			fmt.Fprintf(w, "max_turns %2d | tokens per episode %5.1f (max %.0f) | policy share %.2f | context overflow %.2f\n",
				maxTurns, tokens/n, longest, policy/predicted, overflow/n)
		}
		return nil
	}))
}

func main() {}
