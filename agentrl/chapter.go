package agentrl

// This file holds the Go form of the chapter's #@save code (arl names in the doc comments); the notebooks show it
// verbatim, so keep each definition short.

import "strings"

// EarlyStopEnv is the chapter's EarlyStopEnv: an EditBudgetEnv whose episode stops without a submission once
// MaxInvalid calls were malformed or unknown.
type EarlyStopEnv struct {
	*EditBudgetEnv
	MaxInvalid int
}

// Step delegates, then ends the episode with stop "invalid" once NInvalid reaches MaxInvalid.
func (e *EarlyStopEnv) Step(action string) (string, float64, bool, Info) {
	obs, reward, done, info := e.EditBudgetEnv.Step(action)
	if done || e.NInvalid < e.MaxInvalid {
		return obs, reward, done, info
	}
	e.Done = true
	info = e.FinalInfo(false)
	info.Stop = StopInvalid
	return obs, e.Reward(info), true, info
}

// SingleTurn is the chapter's single_turn: a copy of t whose prompt includes the source, graded after one call by
// MixedTurnEnv.
func SingleTurn(t Task) Task {
	t.Issue = t.Issue + "\n" + CompactSource(t.Source)
	return t
}

// MixedTurnEnv is the chapter's MixedTurnEnv: EditBudgetEnv that ends SingleTurn tasks after the first call and
// grades them as submitted.
type MixedTurnEnv struct {
	*EditBudgetEnv
	Single bool
}

// Reset marks a task as single-turn when its issue has a newline, then delegates.
func (e *MixedTurnEnv) Reset(task Task) string {
	e.Single = strings.Contains(task.Issue, "\n")
	return e.EditBudgetEnv.Reset(task)
}

// Step delegates, then ends a single-turn episode after its first call, graded as submitted.
func (e *MixedTurnEnv) Step(action string) (string, float64, bool, Info) {
	obs, reward, done, info := e.EditBudgetEnv.Step(action)
	if done || !e.Single {
		return obs, reward, done, info
	}
	e.Done = true
	info = e.FinalInfo(true)
	return obs, e.Reward(info), true, info
}

// ContextView is the chapter's context_view: the token ids the policy sees before call k. Tool tokens of turns older
// than the last keepObs are dropped; keepObs < 0 means None, the full context.
func ContextView(ids []int32, owner []Owner, turn []int32, k, keepObs int) []int32 {
	if keepObs < 0 {
		return append([]int32(nil), ids...)
	}
	var view []int32
	for i, id := range ids {
		if !(owner[i] == OwnerTool && int(turn[i]) < k-keepObs) {
			view = append(view, id)
		}
	}
	return view
}

// ContextPolicy is a context policy: View returns the token ids the policy sees before call k of an episode whose
// tokens so far are ids, with their owners and turns. View must not modify its arguments; the view it returns may
// share memory with ids and is not modified by its callers. A context policy is a value, keyed with the run that
// holds it: a policy of one's own is a type with a View method.
type ContextPolicy interface {
	View(ids []int32, owner []Owner, turn []int32, k int) []int32
}

// KeepObs is the chapter's context policy, the book's keep_obs: the last n observations (n < 0: None, the full
// context).
type KeepObs int

// View is ContextView with keepObs = n.
func (n KeepObs) View(ids []int32, owner []Owner, turn []int32, k int) []int32 {
	return ContextView(ids, owner, turn, k, int(n))
}
