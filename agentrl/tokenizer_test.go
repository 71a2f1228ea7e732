package agentrl

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func gymTok(t testing.TB) *Tokenizer {
	t.Helper()
	return BuildTokenizer(mustTasks(t, SplitAll))
}

func TestTokenizer(t *testing.T) {
	tok := gymTok(t)
	if v := tok.VocabSize(); v >= 200 || v != len(tok.Stoi) {
		t.Errorf("vocab size %d (stoi %d), want < 200", v, len(tok.Stoi))
	}
	for name, c := range map[string]struct {
		id   int32
		word string
	}{"pad": {tok.PadID, TokPad}, "unk": {tok.UnkID, TokUnk}, "bos": {tok.BosID, TokBos}, "call": {tok.CallStartID, TokCall},
		"call end": {tok.CallEndID, TokCallEnd}, "obs": {tok.ObsStartID, TokObs}, "obs end": {tok.ObsEndID, TokObsEnd}, "nl": {tok.NewlineID, TokNewline}} {
		if tok.Itos[c.id] != c.word || int32(tok.Stoi[c.word]) != c.id {
			t.Errorf("%s id %d is %q", name, c.id, tok.Itos[c.id])
		}
	}
	for _, task := range mustTasks(t, SplitAll) {
		for _, text := range []string{task.Issue, CompactSource(task.Source), SingleTurn(task).Issue} {
			ids := tok.Encode(text)
			if slices.Contains(ids, tok.UnkID) {
				t.Errorf("%s: unknown word in %q", task.Name, text)
			}
			if got := tok.Decode(ids); got != text {
				t.Errorf("decode(encode(%q)) = %q", text, got)
			}
			if !slices.Equal(tok.Encode(tok.Decode(ids)), ids) {
				t.Errorf("encode(decode) differs for %q", text)
			}
		}
		renamed := RandomizeNames(task, NewRNG(2))
		if slices.Contains(tok.Encode(renamed.Source), tok.UnkID) {
			t.Errorf("%s: renamed source has unknown words", task.Name)
		}
	}
	for _, obs := range []string{ObsEdited, ObsSubmitted, ObsNoEdits, ObsMalformed, ObsUnknownTool, ObsUnknownOp,
		ObsMissingArg, ObsExtraArg, ObsEpisodeOver, ObsEditNotFound, testReport("def f ( xs ) :\n  return 0", []Case{{[]int{4, 0}, 1}})} {
		if slices.Contains(tok.Encode(obs), tok.UnkID) {
			t.Errorf("observation %q has a word outside the vocabulary", obs)
		}
	}
	if ids := tok.Encode("a\nb  zzz"); len(ids) != 4 || ids[1] != tok.NewlineID || ids[3] != tok.UnkID {
		t.Errorf("Encode(a\\nb zzz) = %v", ids)
	}
	if got := tok.Decode([]int32{-1, int32(tok.VocabSize())}); got != "<unk> <unk>" {
		t.Errorf("Decode of bad ids = %q", got)
	}
	for _, c := range []struct {
		call []int32
		n    int
	}{{tok.EncodeCall(ToolRead), 3}, {tok.EncodeCall(ToolEdit, OpComparison), 4}, {tok.EncodeCall(ToolTest), 3}, {tok.EncodeCall(ToolSubmit), 3}} {
		if len(c.call) != c.n || c.call[0] != tok.CallStartID || c.call[len(c.call)-1] != tok.CallEndID {
			t.Errorf("call %q: %v", tok.Decode(c.call), c.call)
		}
	}
	if CallText(ToolEdit, OpComparison) != "<call> edit fix_comparison </call>" {
		t.Errorf("CallText = %q", CallText(ToolEdit, OpComparison))
	}
}

// wordyEnv answers every call with an observation the chapter's vocabulary lacks.
type wordyEnv struct{ *EditBudgetEnv }

func (e wordyEnv) Step(action string) (string, float64, bool, Info) {
	obs, r, done, info := e.EditBudgetEnv.Step(action)
	return obs + " turns left 2", r, done, info
}

// TestUnknownWords checks that words outside the vocabulary are an error naming them, from the sampler, and that
// BuildTokenizer takes extra words.
func TestUnknownWords(t *testing.T) {
	tok, train := testSetup(t)
	if got := tok.Unknown("passed 2 of 3 turns left"); !slices.Equal(got, []string{"turns"}) {
		t.Errorf("Unknown = %q, want [turns]", got)
	}
	wider := BuildTokenizer(train, "turns", "left")
	if len(wider.Unknown("turns left 2")) != 0 || wider.VocabSize() != tok.VocabSize()+1 {
		t.Errorf("BuildTokenizer with extra words: vocabulary %d (was %d), unknown %q", wider.VocabSize(), tok.VocabSize(),
			wider.Unknown("turns left 2"))
	}
	model := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 1, 2, 3
	factory := func() (Env, error) {
		env, err := MakeEnv(cfg)
		if err != nil {
			return nil, err
		}
		return wordyEnv{env.(*EditBudgetEnv)}, nil
	}
	_, err := SampleGroups(model, factory, train[:1], tok, cfg, NewRNG(0))
	var unknown *UnknownWordsError
	if !errors.As(err, &unknown) || !slices.Equal(unknown.Words, []string{"turns"}) || !strings.Contains(err.Error(), "BuildTokenizer") {
		t.Errorf("sampling with unknown words: %v, want an UnknownWordsError naming \"turns\" and how to add it", err)
	}
}

// TestNegativePenaltyRefused checks that a price that pays the agent is refused, saying why.
func TestNegativePenaltyRefused(t *testing.T) {
	for _, opt := range []RewardOptions{{StepPenalty: -1}, {InvalidPenalty: -0.1}} {
		if _, err := MakeReward(RewardHidden, opt); err == nil || !strings.Contains(err.Error(), "pays") {
			t.Errorf("%+v: %v, want an error saying it pays", opt, err)
		}
	}
	cfg := DefaultRLConfig()
	cfg.Reward.StepPenalty = -1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "stall") {
		t.Errorf("RLConfig with step penalty -1: %v", err)
	}
}
