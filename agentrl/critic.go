package agentrl

import "github.com/agentrl-go/agentrl/gomlxmodel"

// CriticValues is arl.critic_values: the critic's values [B][T-1] on the batch, index j being the value of the
// state before token j+1.
func CriticValues(critic *gomlxmodel.Critic, batch Batch) ([][]float32, error) {
	v, err := critic.Values(batch.IDs, batch.B, batch.T)
	if err != nil {
		return nil, err
	}
	return Rows(v, batch.T-1), nil
}

// ValueStep is one Adam step of the critic on arl.value_loss: the masked token-mean squared error between its
// values on batch and returns, clipped around oldValues when clip > 0. It returns the loss.
func ValueStep(critic *gomlxmodel.Critic, batch Batch, oldValues, returns [][]float32, clip, lr float64) (float64, error) {
	return critic.Update(batch.IDs, batch.B, batch.T, Flatten(oldValues), Flatten(returns), batch.ActionMask, clip, lr)
}
