// Command dumpgym writes, as JSON on stdout, what grpo_bench.py needs to replay the BugFix gym at the token level
// with the Go tokenizer: the vocabulary, the special and observation token ids, and for each training task its
// prompt (the issue), its identifiers (for renaming), and the outcome of every call on the source before an edit
// and after each op (edit, read, test and refused-edit observations, hidden verdict), taken from a real
// EditBudgetEnv. With RLConfig's one edit per episode, these states are all the sources an episode can see.
//
// With -policy it also writes the chapter's RL base agent (ch12's Base: loaded from the result store in
// $AGENTRL_CACHE, or trained there first) as a TinyAgent stream (gomlxmodel's Model.WriteTo, which grpo_bench.py
// reads into its PyTorch model), and with -logits that agent's logits on a few sequences (see checkSequences), so
// the PyTorch side can check that it computes the same model.
//
//	go run ./cmd/pytorchref/dumpgym > /tmp/gym.json
//	go run ./cmd/pytorchref/dumpgym -policy /tmp/base.tinyagent -logits /tmp/logits.json > /tmp/gym.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
	"github.com/agentrl-go/agentrl/ch12"
	"github.com/agentrl-go/agentrl/gomlxmodel"
)

type state struct {
	Edit       []int32 `json:"edit,omitempty"`     // observation of the edit that led here
	NoEdits    []int32 `json:"no_edits,omitempty"` // observation of a further, refused edit
	Read       []int32 `json:"read"`               // observation of read: the compact source
	Test       []int32 `json:"test"`               // observation of test
	HiddenPass bool    `json:"hidden_pass"`        // verdict of submit
}

type task struct {
	Name   string           `json:"name"`
	Issue  []int32          `json:"issue"`  // the prompt, without <bos>
	Idents []int32          `json:"idents"` // identifiers of the source, in order of first appearance
	Start  state            `json:"start"`  // before any edit
	Edited map[string]state `json:"edited"` // after the op (absent: the op finds no site)
}

type gym struct {
	Itos     []string           `json:"itos"`
	Special  map[string]int32   `json:"special"`
	Ops      []int32            `json:"ops"`
	Tools    map[string]int32   `json:"tools"`
	Obs      map[string][]int32 `json:"obs"`
	NamePool []int32            `json:"name_pool"`
	Tasks    []task             `json:"tasks"`
}

func main() {
	policyPath := flag.String("policy", "", "also write the chapter's RL base agent (made, or loaded from $AGENTRL_CACHE) to this file as a TinyAgent stream")
	logitsPath := flag.String("logits", "", "also write the base agent's logits on checkSequences to this file as JSON (needs -policy)")
	flag.Parse()
	if *logitsPath != "" && *policyPath == "" {
		log.Fatal("dumpgym: -logits needs -policy")
	}
	g, err := dump()
	if err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(g); err != nil {
		log.Fatal(err)
	}
	if *policyPath == "" {
		return
	}
	ch, err := ch12.Setup()
	if err != nil {
		log.Fatal(err)
	}
	base, err := ch.Base()
	if err != nil {
		log.Fatal(err)
	}
	if err := writeFile(*policyPath, func(w io.Writer) error { _, err := base.WriteTo(w); return err }); err != nil {
		log.Fatal(err)
	}
	if *logitsPath == "" {
		return
	}
	seqs := checkSequences(g, base.Config().MaxLen)
	if err := writeFile(*logitsPath, func(w io.Writer) error { return writeLogits(w, base, seqs) }); err != nil {
		log.Fatal(err)
	}
}

// dump builds the gym from the chapter's tasks and tokenizer.
func dump() (gym, error) {
	all, err := agentrl.MakeTasks(agentrl.SplitAll)
	if err != nil {
		return gym{}, err
	}
	train, err := agentrl.MakeTasks(agentrl.SplitTrain)
	if err != nil {
		return gym{}, err
	}
	tok := agentrl.BuildTokenizer(all)
	id := func(w string) int32 { return int32(tok.Stoi[w]) }
	g := gym{
		Itos: tok.Itos,
		Special: map[string]int32{"pad": tok.PadID, "bos": tok.BosID, "call": tok.CallStartID, "call_end": tok.CallEndID,
			"obs": tok.ObsStartID, "obs_end": tok.ObsEndID, "nl": tok.NewlineID},
		Tools: map[string]int32{},
		Obs:   map[string][]int32{},
	}
	for _, t := range []string{agentrl.ToolRead, agentrl.ToolEdit, agentrl.ToolTest, agentrl.ToolSubmit} {
		g.Tools[t] = id(t)
	}
	for _, op := range agentrl.Ops() {
		g.Ops = append(g.Ops, id(op))
	}
	for name, text := range map[string]string{
		"edited": agentrl.ObsEdited, "no_edits": agentrl.ObsNoEdits, "malformed": agentrl.ObsMalformed,
		"unknown_tool": agentrl.ObsUnknownTool, "unknown_op": agentrl.ObsUnknownOp, "missing_arg": agentrl.ObsMissingArg,
		"extra_arg": agentrl.ObsExtraArg, "no_site": agentrl.ObsEditNotFound,
	} {
		g.Obs[name] = tok.Encode(text)
	}
	pool := agentrl.NamePool()
	for _, w := range pool {
		g.NamePool = append(g.NamePool, id(w))
	}
	// outcome replays calls on a fresh env: the edit op (if any), then read, test, a refused edit and submit.
	outcome := func(t agentrl.Task, op string) (state, bool) {
		env, err := agentrl.NewEditBudgetEnv(100, nil, 1)
		if err != nil {
			log.Fatal(err)
		}
		env.Reset(t)
		var st state
		step := func(tool string, args ...string) ([]int32, float64) {
			obs, reward, _, _ := env.Step(agentrl.CallText(tool, args...))
			return tok.Encode(obs), reward
		}
		if op != "" {
			if st.Edit, _ = step(agentrl.ToolEdit, op); env.NEdits == 0 {
				return st, false
			}
			st.NoEdits, _ = step(agentrl.ToolEdit, op)
		}
		st.Read, _ = step(agentrl.ToolRead)
		st.Test, _ = step(agentrl.ToolTest)
		_, reward := step(agentrl.ToolSubmit)
		st.HiddenPass = reward == 1
		return st, true
	}
	for _, t := range train {
		start, _ := outcome(t, "")
		d := task{Name: t.Name, Issue: tok.Encode(t.Issue), Start: start, Edited: map[string]state{}}
		for _, w := range strings.Fields(t.Source) {
			if i := id(w); slices.Contains(pool, w) && !slices.Contains(d.Idents, i) {
				d.Idents = append(d.Idents, i)
			}
		}
		for _, op := range agentrl.Ops() {
			if st, ok := outcome(t, op); ok {
				d.Edited[op] = st
			}
		}
		g.Tasks = append(g.Tasks, d)
	}
	return g, nil
}

// writeFile creates path and writes it with write.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// checkSequences are the sequences on which the PyTorch model's logits are checked against Go's: for each of
// the first three tasks, <bos>, its prompt and a read call with its observation, then its test call with its
// observation, and one sequence of maxLen tokens drawn at random from the vocabulary (every position of the
// model).
func checkSequences(g gym, maxLen int) [][]int32 {
	var seqs [][]int32
	sp := g.Special
	for _, t := range g.Tasks[:min(3, len(g.Tasks))] {
		s := append([]int32{sp["bos"]}, t.Issue...)
		for _, c := range []struct {
			tool string
			obs  []int32
		}{{"read", t.Start.Read}, {"test", t.Start.Test}} {
			s = append(s, sp["call"], g.Tools[c.tool], sp["call_end"], sp["obs"])
			s = append(append(s, c.obs...), sp["obs_end"])
		}
		seqs = append(seqs, s[:min(len(s), maxLen)])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]int32, maxLen)
	for i := range random {
		random[i] = int32(rng.IntN(len(g.Itos)))
	}
	return append(seqs, random)
}

// checkCase is one sequence of a logits check and the Go model's logits on it, [len(IDs)·V].
type checkCase struct {
	IDs    []int32   `json:"ids"`
	Logits []float32 `json:"logits"`
}

// writeLogits writes, as JSON, m's logits on each of seqs (one sequence at a time): {"vocab": V, "cases":
// [{"ids": [...], "logits": [...]}, ...]}, which grpo_bench.py --logits compares with its own.
func writeLogits(w io.Writer, m *gomlxmodel.Model, seqs [][]int32) error {
	out := struct {
		Vocab int         `json:"vocab"`
		Cases []checkCase `json:"cases"`
	}{Vocab: m.Config().Vocab}
	for _, s := range seqs {
		logits, err := m.Logits(s, 1, len(s))
		if err != nil {
			return err
		}
		out.Cases = append(out.Cases, checkCase{IDs: s, Logits: logits})
	}
	return json.NewEncoder(w).Encode(out)
}
