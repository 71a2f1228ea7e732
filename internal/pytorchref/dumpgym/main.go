// Command dumpgym writes, as JSON on stdout, what grpo_bench.py needs to replay the BugFix gym at the token level
// with the Go tokenizer: the vocabulary, the special and observation token ids, and for each training task its
// prompt (the issue), its identifiers (for renaming), and the outcome of every call on the source before an edit
// and after each op (edit, read, test and refused-edit observations, hidden verdict), taken from a real
// EditBudgetEnv. With RLConfig's one edit per episode, these states are all the sources an episode can see.
//
//	go run ./internal/pytorchref/dumpgym > /tmp/gym.json
package main

import (
	"encoding/json"
	"log"
	"os"
	"slices"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
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
	all, err := agentrl.MakeTasks(agentrl.SplitAll)
	if err != nil {
		log.Fatal(err)
	}
	train, err := agentrl.MakeTasks(agentrl.SplitTrain)
	if err != nil {
		log.Fatal(err)
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
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(g); err != nil {
		log.Fatal(err)
	}
}
