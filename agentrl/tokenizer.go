package agentrl

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Special tokens.
const (
	TokPad       = "<pad>"
	TokUnk       = "<unk>"
	TokBos       = "<bos>" // template token that opens every episode, before the prompt
	TokCall      = "<call>"
	TokCallEnd   = "</call>"
	TokObs       = "<obs>"
	TokObsEnd    = "</obs>"
	TokNewline   = "<nl>"
	newlineSplit = " " + TokNewline + " "
)

var specialTokens = []string{TokPad, TokUnk, TokBos, TokCall, TokCallEnd, TokObs, TokObsEnd, TokNewline}

// gymWords are the words of calls and observations, in the vocabulary whatever the tasks.
var gymWords = []string{
	ToolRead, ToolEdit, ToolTest, ToolSubmit,
	"def", "for", "in", "if", "return", "(", ")", ":", "=", "+", "-", "*", ">", ">=", "<", "<=", "==", "[", "]",
	"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10",
	"error", "malformed", "call", "unknown", "tool", "op", "missing", "extra", "argument", "no", "edits", "left",
	"applied", "passed", "of", "failed", "on", "submitted", "episode", "over", "should",
}

// Tokenizer is the word-level tokenizer of arl.build_tokenizer: text splits on whitespace, a newline is the token
// <nl>, and words outside the vocabulary map to <unk>.
type Tokenizer struct {
	Itos                                                                         []string
	Stoi                                                                         map[string]int // tok.stoi; e.g. Stoi["<nl>"]
	PadID, UnkID, BosID, CallStartID, CallEndID, ObsStartID, ObsEndID, NewlineID int32
}

// BuildTokenizer is arl.build_tokenizer: the special tokens first, then, sorted, every word of the tasks (issue,
// source and its read projection), the identifier pool, the ops, the tools and the observation words, and the extra
// words (an environment's own observations: "turns", "left"). A model's vocabulary is its tokenizer's, so a model
// for a larger vocabulary is another model.
func BuildTokenizer(tasks []Task, extra ...string) *Tokenizer {
	words := map[string]bool{}
	add := func(text string) {
		for _, w := range strings.Fields(strings.ReplaceAll(text, "\n", newlineSplit)) {
			words[w] = true
		}
	}
	for _, t := range tasks {
		add(t.Issue)
		add(t.Source)
	}
	for _, w := range extra {
		add(w)
	}
	for _, list := range [][]string{namePool, repairOps[:], gymWords} {
		for _, w := range list {
			words[w] = true
		}
	}
	itos := append([]string(nil), specialTokens...)
	for _, s := range specialTokens {
		delete(words, s)
	}
	rest := make([]string, 0, len(words))
	for w := range words {
		rest = append(rest, w)
	}
	sort.Strings(rest)
	itos = append(itos, rest...)
	t := &Tokenizer{Itos: itos, Stoi: make(map[string]int, len(itos))}
	for i, w := range itos {
		t.Stoi[w] = i
	}
	id := func(w string) int32 { return int32(t.Stoi[w]) }
	t.PadID, t.UnkID, t.BosID = id(TokPad), id(TokUnk), id(TokBos)
	t.CallStartID, t.CallEndID, t.ObsStartID, t.ObsEndID, t.NewlineID = id(TokCall), id(TokCallEnd), id(TokObs), id(TokObsEnd), id(TokNewline)
	return t
}

// VocabSize is the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.Itos) }

// Encode splits text into words ("\n" becomes <nl>) and returns their ids, <unk> for unknown words.
func (t *Tokenizer) Encode(text string) []int32 {
	words := strings.Fields(strings.ReplaceAll(text, "\n", newlineSplit))
	ids := make([]int32, len(words))
	for i, w := range words {
		if id, ok := t.Stoi[w]; ok {
			ids[i] = int32(id)
		} else {
			ids[i] = t.UnkID
		}
	}
	return ids
}

// Unknown returns the words of text outside the vocabulary, each once, in order of appearance.
func (t *Tokenizer) Unknown(text string) []string {
	var out []string
	for _, w := range strings.Fields(strings.ReplaceAll(text, "\n", newlineSplit)) {
		if _, ok := t.Stoi[w]; !ok && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// UnknownWordsError is the error of an episode whose prompt or observation has words outside the tokenizer's
// vocabulary, which would reach the policy as <unk>.
type UnknownWordsError struct {
	Words []string
	Text  string // the prompt or observation
}

func (e *UnknownWordsError) Error() string {
	return fmt.Sprintf("words outside the vocabulary %q in %q: the policy would read each as <unk>; build the tokenizer "+
		"with them (agentrl.BuildTokenizer(tasks, words...); in a notebook ch, _ = ch.With(ch12.Words(words...), "+
		"ch12.In(env)) for a base agent trained in the environment that shows them) or use words the vocabulary "+
		"has (tok.Stoi)", e.Words, e.Text)
}

// Decode joins the words of ids with spaces, turning <nl> back into "\n" (so Encode(Decode(ids)) == ids); ids
// outside the vocabulary decode as <unk>.
func (t *Tokenizer) Decode(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		w := TokUnk
		if id >= 0 && int(id) < len(t.Itos) {
			w = t.Itos[id]
		}
		switch {
		case w == TokNewline:
			b.WriteString("\n")
		case i > 0 && ids[i-1] != t.NewlineID:
			b.WriteString(" ")
			b.WriteString(w)
		default:
			b.WriteString(w)
		}
	}
	return b.String()
}

// EncodeCall is Encode(CallText(tool, args...)): the policy tokens of one call, e.g. for scripted demonstrations.
func (t *Tokenizer) EncodeCall(tool string, args ...string) []int32 {
	return t.Encode(CallText(tool, args...))
}
