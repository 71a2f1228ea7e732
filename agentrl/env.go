package agentrl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Tools of the BugFix gym.
const (
	ToolRead   = "read"   // observation: CompactSource of the current source
	ToolEdit   = "edit"   // edit OP: apply a repair op; observation "edit applied"
	ToolTest   = "test"   // observation: "passed k of n" on the visible tests
	ToolSubmit = "submit" // ends the episode; the hidden tests decide the verdict
)

// Observations of the gym (besides read's source and test's "passed k of n").
const (
	ObsEdited       = "edit applied"
	ObsSubmitted    = "submitted"
	ObsNoEdits      = "error no edits left"
	ObsMalformed    = "error malformed call"
	ObsUnknownTool  = "error unknown tool"
	ObsUnknownOp    = "error unknown op"
	ObsMissingArg   = "error missing argument"
	ObsExtraArg     = "error extra argument"
	ObsEpisodeOver  = "error episode over"
	ObsEditNotFound = "error op failed"
)

// Env is the environment interface of the book's envs: Reset(task) returns the prompt, Step(action text) returns
// (obs, reward, done, info), with the whole-episode reward and a meaningful info on the terminal step only. Stop ends
// the episode now, unsubmitted, with the given stop reason (Episode uses it on context overflow).
type Env interface {
	Reset(task Task) string
	Step(action string) (obs string, reward float64, done bool, info Info)
	Stop(reason string) (reward float64, info Info)
}

// CallText formats one call, e.g. CallText("edit", "fix_comparison") == "<call> edit fix_comparison </call>".
func CallText(tool string, args ...string) string {
	return strings.Join(append(append([]string{TokCall, tool}, args...), TokCallEnd), " ")
}

// Call is a parsed call.
type Call struct {
	Tool string
	Arg  string // the op of an edit
}

// ParseCall parses the text of one call. Its error text is the error observation the env returns.
func ParseCall(action string) (Call, error) {
	w := strings.Fields(action)
	if len(w) < 3 || w[0] != TokCall || w[len(w)-1] != TokCallEnd {
		return Call{}, errors.New(ObsMalformed)
	}
	w = w[1 : len(w)-1]
	for _, s := range w {
		if s == TokCall || s == TokCallEnd {
			return Call{}, errors.New(ObsMalformed)
		}
	}
	nargs := 0
	switch w[0] {
	case ToolRead, ToolTest, ToolSubmit:
	case ToolEdit:
		nargs = 1
	default:
		return Call{}, errors.New(ObsUnknownTool)
	}
	switch {
	case len(w)-1 < nargs:
		return Call{}, errors.New(ObsMissingArg)
	case len(w)-1 > nargs:
		return Call{}, errors.New(ObsExtraArg)
	}
	c := Call{Tool: w[0]}
	if nargs == 1 {
		if !isOp(w[1]) {
			return Call{}, errors.New(ObsUnknownOp)
		}
		c.Arg = w[1]
	}
	return c, nil
}

// EditBudgetEnv is arl.EditBudgetEnv, the BugFix environment: at most MaxTurns calls, at most MaxEdits applied
// edits, reward Reward(info) on the terminal step. A malformed call or an unknown tool or op gets an error
// observation, costs a turn and counts in NInvalid; an edit beyond MaxEdits is refused with an error observation
// (it costs a turn but is neither an edit nor invalid).
type EditBudgetEnv struct {
	MaxTurns, MaxEdits int
	Reward             RewardFunc // reward_fn
	Done               bool       // settable by wrappers that end the episode
	NInvalid           int        // n_invalid so far

	Task                           Task
	Source                         string // current source (after edits)
	Edited                         string // the line the last applied edit changed
	NTurns, NReads, NTests, NEdits int
	Last                           Info // terminal info of the env's own ending (wrappers that end an episode do not update it)
}

// NewEditBudgetEnv is arl.EditBudgetEnv(max_turns, reward, max_edits); a nil reward is the hidden-test verdict.
func NewEditBudgetEnv(maxTurns int, reward RewardFunc, maxEdits int) (*EditBudgetEnv, error) {
	if maxTurns < 1 {
		return nil, fmt.Errorf("edit budget env: max turns %d < 1", maxTurns)
	}
	if maxEdits < 0 {
		return nil, fmt.Errorf("edit budget env: max edits %d < 0", maxEdits)
	}
	if reward == nil {
		reward = HiddenReward
	}
	return &EditBudgetEnv{MaxTurns: maxTurns, MaxEdits: maxEdits, Reward: reward}, nil
}

// Reset starts an episode on task and returns the prompt: the task's issue.
func (e *EditBudgetEnv) Reset(task Task) string {
	*e = EditBudgetEnv{MaxTurns: e.MaxTurns, MaxEdits: e.MaxEdits, Reward: e.Reward, Task: task, Source: task.Source}
	return task.Issue
}

// Step runs one call. It ends the episode on submit (graded) and when the call uses the last turn (unsubmitted).
func (e *EditBudgetEnv) Step(action string) (string, float64, bool, Info) {
	if e.Done {
		return ObsEpisodeOver, 0, true, e.Last
	}
	e.NTurns++
	obs := ""
	c, err := ParseCall(action)
	switch {
	case err != nil:
		e.NInvalid++
		obs = err.Error()
	case c.Tool == ToolSubmit:
		e.Done = true
		e.Last = e.FinalInfo(true)
		return ObsSubmitted, e.Reward(e.Last), true, e.Last
	case c.Tool == ToolRead:
		e.NReads++
		obs = CompactSource(e.Source)
	case c.Tool == ToolTest:
		e.NTests++
		obs = testReport(e.Source, e.Task.Visible)
	case c.Tool == ToolEdit && e.NEdits >= e.MaxEdits:
		obs = ObsNoEdits
		if e.Edited != "" {
			obs += " : " + e.Edited
		}
	case c.Tool == ToolEdit:
		src, err := ApplyOp(e.Source, c.Arg)
		if err != nil {
			obs = ObsEditNotFound
			break
		}
		e.Source, e.Edited = src, changedLine(e.Source, src)
		obs = ObsEdited + " : " + e.Edited
		e.NEdits++
	}
	if e.NTurns >= e.MaxTurns {
		e.Done = true
		e.Last = e.FinalInfo(false)
		return obs, e.Reward(e.Last), true, e.Last
	}
	return obs, 0, false, Info{}
}

// Stop ends the episode now, unsubmitted, with the given stop reason.
func (e *EditBudgetEnv) Stop(reason string) (float64, Info) {
	e.Done = true
	e.Last = e.FinalInfo(false)
	e.Last.Stop = reason
	return e.Reward(e.Last), e.Last
}

// FinalInfo is final_info(submitted): the terminal info of the episode so far, with the hidden verdict of the
// current source and the default stop reason (StopSubmitted when submitted, StopMaxTurns otherwise).
func (e *EditBudgetEnv) FinalInfo(submitted bool) Info {
	stop := StopMaxTurns
	if submitted {
		stop = StopSubmitted
	}
	return Info{
		Submitted:  submitted,
		HiddenPass: len(e.Task.Hidden) > 0 && Passes(e.Source, e.Task.Hidden) == len(e.Task.Hidden),
		NInvalid:   e.NInvalid,
		NTurns:     e.NTurns,
		NReads:     e.NReads,
		NTests:     e.NTests,
		NEdits:     e.NEdits,
		Stop:       stop,
	}
}

// failedOn introduces the first failing input in the test tool's observation.
const failedOn = " failed on [ "

// testFailed reports whether obs is a test observation that reports a failing case.
func testFailed(obs string) bool {
	var passed, of int
	n, _ := fmt.Sscanf(obs, "passed %d of %d", &passed, &of)
	return n == 2 && passed < of
}

// testReport is the test tool's observation: how many visible cases pass and the input of the first that fails,
// e.g. "passed 1 of 3 failed on [ 4 0 7 ]".
func testReport(source string, cases []Case) string {
	passed, firstFailed := 0, -1
	for i, c := range cases {
		if got, err := RunProgram(source, c.Input); err == nil && got == c.Want {
			passed++
		} else if firstFailed < 0 {
			firstFailed = i
		}
	}
	report := fmt.Sprintf("passed %d of %d", passed, len(cases))
	if firstFailed < 0 {
		return report
	}
	input := cases[firstFailed].Input
	words := make([]string, len(input))
	for i, x := range input {
		words[i] = strconv.Itoa(x)
	}
	return report + failedOn + strings.Join(words, " ") + " ]"
}

// changedLine is the first line of after that differs from before, without its indentation.
func changedLine(before, after string) string {
	old, lines := strings.Split(before, "\n"), strings.Split(after, "\n")
	for i, l := range lines {
		if i >= len(old) || l != old[i] {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
