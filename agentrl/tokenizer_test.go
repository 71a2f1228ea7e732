package agentrl

import (
	"slices"
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
		ObsMissingArg, ObsExtraArg, ObsEpisodeOver, ObsEditNotFound, testReport("def f ( xs ) :\n  return 0", []Case{{[]int{4, 0}, 1}}, ObsEcho)} {
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
