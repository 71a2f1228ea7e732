package agentrl

import (
	"fmt"
	"slices"
	"strings"
)

// Owner says who produced a token (arl.OWNER): only policy tokens are actions.
type Owner int8

// Owner codes, in the book's order.
const (
	OwnerTemplate Owner = iota // <bos>, <obs>, </obs>
	OwnerPrompt                // the issue
	OwnerPolicy                // the calls, <call> and </call> included
	OwnerTool                  // observation text
)

// Owners returns the owner codes in the book's order (a new slice on each call); String names each.
func Owners() []Owner { return []Owner{OwnerTemplate, OwnerPrompt, OwnerPolicy, OwnerTool} }

// ownerNames are the book's names of the owner codes, indexed by Owner.
var ownerNames = [...]string{"template", "prompt", "policy", "tool"}

// String returns the book's name of the owner: "template", "prompt", "policy" or "tool", and "none" for a value
// that is not an owner code.
func (o Owner) String() string {
	if o >= 0 && int(o) < len(ownerNames) {
		return ownerNames[o]
	}
	return "none"
}

// MaxCallTokens is arl.MAX_CALL_TOKENS: a call ends at </call> or when it reaches this many tokens.
const MaxCallTokens = 8

// ContextLen is TinyAgent's context length, the default max length of an episode.
const ContextLen = 256

// Episode is arl.Episode, the incremental token record of one episode: every token with its owner, its turn (the
// index of the call it belongs to; prompt tokens are turn 0, tool tokens carry the turn of the call that produced
// them) and its sampling log-prob (0 except on policy tokens).
//
// Layout: <bos> (template) issue (prompt), then per call: the call (policy), and unless the episode ended,
// <obs> (template) observation (tool) </obs> (template). When an observation plus the next call (MaxCallTokens)
// would not fit in MaxLen tokens, the observation is dropped and the episode ends through Env.Stop(StopTruncated);
// a prompt that leaves no room for a call ends the episode at once, so only a prompt longer than MaxLen makes an
// episode longer than MaxLen.
type Episode struct {
	Env      Env
	Task     Task
	Tok      *Tokenizer
	MaxTurns int // safety cap; the env's own budget ends the episode first
	MaxLen   int
	IDs      []int32
	Owner    []Owner
	Turn     []int32
	Logp     []float32
	Actions  [][]int32 // the calls made; len(Actions) is the index of the next call
	Done     bool
	Reward   float64
	Info     Info
	Obs      []string // observation text of each call ("" when the episode ended on it)
	// Err is set when the prompt or an observation has words outside the vocabulary (an *UnknownWordsError): the
	// samplers stop with it.
	Err error
}

// NewEpisode is arl.Episode(env, task, tok, max_turns, max_len): it resets env with task and writes <bos> and the
// prompt.
func NewEpisode(env Env, task Task, tok *Tokenizer, maxTurns, maxLen int) *Episode {
	e := &Episode{Env: env, Task: task, Tok: tok, MaxTurns: maxTurns, MaxLen: maxLen}
	prompt := env.Reset(task)
	e.push([]int32{tok.BosID}, OwnerTemplate, 0, nil)
	promptIDs := tok.Encode(prompt)
	e.push(promptIDs, OwnerPrompt, 0, nil)
	e.checkWords(prompt, promptIDs)
	if len(e.IDs)+MaxCallTokens > maxLen {
		e.finish(env.Stop(StopTruncated))
	}
	return e
}

func (e *Episode) push(ids []int32, o Owner, turn int, logp []float32) {
	for i, id := range ids {
		e.IDs = append(e.IDs, id)
		e.Owner = append(e.Owner, o)
		e.Turn = append(e.Turn, int32(turn))
		lp := float32(0)
		if i < len(logp) {
			lp = logp[i]
		}
		e.Logp = append(e.Logp, lp)
	}
}

func (e *Episode) finish(reward float64, info Info) {
	e.Done, e.Reward, e.Info = true, reward, info
}

// Act is Episode.act: it appends the call's tokens (policy, with their sampling log-probs), sends the decoded call
// to the env and appends the observation, or ends the episode (env done, turn cap, or truncation). Acting on a
// finished episode does nothing.
func (e *Episode) Act(call []int32, logp []float32) {
	if e.Done {
		return
	}
	k := len(e.Actions)
	e.Actions = append(e.Actions, append([]int32(nil), call...))
	e.push(call, OwnerPolicy, k, logp)
	obs, reward, done, info := e.Env.Step(e.Tok.Decode(call))
	if done {
		e.Obs = append(e.Obs, "")
		e.finish(reward, info)
		return
	}
	obsIDs := e.Tok.Encode(obs)
	e.checkWords(obs, obsIDs)
	switch {
	case len(e.Actions) >= e.MaxTurns:
		e.Obs = append(e.Obs, "")
		e.finish(e.Env.Stop(StopMaxTurns))
	case len(e.IDs)+len(obsIDs)+2+MaxCallTokens > e.MaxLen:
		e.Obs = append(e.Obs, "")
		e.finish(e.Env.Stop(StopTruncated))
	default:
		e.Obs = append(e.Obs, obs)
		e.push([]int32{e.Tok.ObsStartID}, OwnerTemplate, k, nil)
		e.push(obsIDs, OwnerTool, k, nil)
		e.push([]int32{e.Tok.ObsEndID}, OwnerTemplate, k, nil)
	}
}

// checkWords sets Err, once, when text, encoded as ids, has words outside the vocabulary (which encode as <unk>).
func (e *Episode) checkWords(text string, ids []int32) {
	if e.Err == nil && slices.Contains(ids, e.Tok.UnkID) {
		if words := e.Tok.Unknown(text); len(words) > 0 {
			e.Err = &UnknownWordsError{Words: words, Text: text}
		}
	}
}

// LastObs is the observation text of the last call ("" before the first call or when the episode ended on it).
func (e *Episode) LastObs() string {
	if len(e.Obs) == 0 {
		return ""
	}
	return e.Obs[len(e.Obs)-1]
}

// Transcript renders the episode one segment per line, tokens as words (<nl> shown as such): the prompt (with
// <bos>), then each call and its observation, then the outcome.
func (e *Episode) Transcript() string {
	var b strings.Builder
	label := ""
	for i, id := range e.IDs {
		l := "prompt"
		switch {
		case e.Owner[i] == OwnerPolicy:
			l = fmt.Sprintf("call %d", e.Turn[i])
		case e.Owner[i] == OwnerTool || e.Owner[i] == OwnerTemplate && i > 0:
			l = fmt.Sprintf("obs %d", e.Turn[i])
		}
		if l != label {
			if label != "" {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%-7s|", l)
			label = l
		}
		b.WriteString(" " + e.Tok.Itos[id])
	}
	if e.Done {
		i := e.Info
		fmt.Fprintf(&b, "\nreward %g | submitted %v | hidden pass %v | turns %d | invalid %d | stop %s", e.Reward, i.Submitted, i.HiddenPass, i.NTurns, i.NInvalid, i.Stop)
	}
	return b.String()
}

// CallTexts returns the text of each call of an episode, in order, without the <call> </call> brackets.
func CallTexts(t Trajectory, tok *Tokenizer) []string {
	var calls [][]int32
	for i, id := range t.IDs {
		if t.Owner[i] != OwnerPolicy {
			continue
		}
		k := int(t.Turn[i])
		for len(calls) <= k {
			calls = append(calls, nil)
		}
		if id != tok.CallStartID && id != tok.CallEndID {
			calls[k] = append(calls[k], id)
		}
	}
	texts := make([]string, len(calls))
	for k, c := range calls {
		texts[k] = tok.Decode(c)
	}
	return texts
}
