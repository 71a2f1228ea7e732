package agentrl

// Probing a policy: instead of sampling what it does next, ask how likely each candidate call is.

import (
	"fmt"
	"math"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// CallProbs returns, for each context in views, the probability that policy's next call (at temperature 1) is
// each of calls: probs[i][c] = p(calls[c] | views[i]), the product of the call's token probabilities. The calls
// are token sequences such as Tokenizer.EncodeCall gives, closing token included, so the probabilities of
// distinct well-formed calls add up to at most 1 and the rest is the chance of a malformed or other call. All
// views × calls rows are scored in one forward pass.
func CallProbs(policy *gomlxmodel.Model, views, calls [][]int32, padID int32) ([][]float64, error) {
	if len(views) == 0 || len(calls) == 0 {
		return nil, fmt.Errorf("call probs: %d views and %d calls, want at least one of each", len(views), len(calls))
	}
	var rows [][]int32
	for i, view := range views {
		if len(view) == 0 {
			return nil, fmt.Errorf("call probs: view %d is empty", i)
		}
		for c, call := range calls {
			if len(call) == 0 {
				return nil, fmt.Errorf("call probs: call %d is empty", c)
			}
			rows = append(rows, append(append(make([]int32, 0, len(view)+len(call)), view...), call...))
		}
	}
	T := 0
	for _, r := range rows {
		T = max(T, len(r))
	}
	if maxLen := policy.Config().MaxLen; T > maxLen {
		return nil, fmt.Errorf("call probs: a view and call take %d tokens, more than the context (%d)", T, maxLen)
	}
	logp, err := policy.SequenceLogProbs(PadRows(rows, T, padID), len(rows), T)
	if err != nil {
		return nil, fmt.Errorf("call probs: %w", err)
	}
	probs := make([][]float64, len(views))
	for i, view := range views {
		probs[i] = make([]float64, len(calls))
		for c, call := range calls {
			row := i*len(calls) + c
			sum := 0.0
			for j := len(view); j < len(view)+len(call); j++ { // position j-1 predicts token j
				sum += float64(logp[row*(T-1)+j-1])
			}
			probs[i][c] = math.Exp(sum)
		}
	}
	return probs, nil
}
