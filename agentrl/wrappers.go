package agentrl

import "fmt"

// NewEarlyStopEnv is EarlyStopEnv(max_turns, reward, max_edits, max_invalid); the book's defaults are 6, hidden, 1, 1.
func NewEarlyStopEnv(maxTurns int, reward RewardFunc, maxEdits, maxInvalid int) (*EarlyStopEnv, error) {
	if maxInvalid < 1 {
		return nil, fmt.Errorf("early stop env: max invalid %d < 1", maxInvalid)
	}
	e, err := NewEditBudgetEnv(maxTurns, reward, maxEdits)
	if err != nil {
		return nil, err
	}
	return &EarlyStopEnv{EditBudgetEnv: e, MaxInvalid: maxInvalid}, nil
}

// EarlyStop makes Cfg's environments (MakeEnv's) as EarlyStopEnv: an episode stops without a submission at its
// MaxInvalid-th malformed or unknown call. As a value it names its environments by both fields.
type EarlyStop struct {
	Cfg        RLConfig
	MaxInvalid int
}

// NewEnv makes one environment.
func (e EarlyStop) NewEnv() (Env, error) {
	if e.MaxInvalid < 1 {
		return nil, fmt.Errorf("early stop env: max invalid %d < 1", e.MaxInvalid)
	}
	env, err := MakeEnv(e.Cfg)
	if err != nil {
		return nil, err
	}
	return &EarlyStopEnv{EditBudgetEnv: env.(*EditBudgetEnv), MaxInvalid: e.MaxInvalid}, nil
}

// NewMixedTurnEnv is MixedTurnEnv(max_turns, reward, max_edits).
func NewMixedTurnEnv(maxTurns int, reward RewardFunc, maxEdits int) (*MixedTurnEnv, error) {
	e, err := NewEditBudgetEnv(maxTurns, reward, maxEdits)
	if err != nil {
		return nil, err
	}
	return &MixedTurnEnv{EditBudgetEnv: e}, nil
}

// LoggedEnv is arl.LoggedEnv: a transparent wrapper that appends the terminal Info of every finished episode to
// *Log (in completion order).
type LoggedEnv struct {
	Env
	Log *[]Info
}

// Step delegates and logs the info of a terminal step.
func (l LoggedEnv) Step(action string) (string, float64, bool, Info) {
	obs, reward, done, info := l.Env.Step(action)
	if done {
		*l.Log = append(*l.Log, info)
	}
	return obs, reward, done, info
}

// Stop delegates and logs the terminal info.
func (l LoggedEnv) Stop(reason string) (float64, Info) {
	reward, info := l.Env.Stop(reason)
	*l.Log = append(*l.Log, info)
	return reward, info
}

// LogByStep is arl.log_by_step: it splits a run's flat env log into one slice per training step, step k holding
// the next history[k].Episodes entries. The steps' episodes must add up to len(log). It splits a run's LogTask as
// it splits its Log.
func LogByStep[E any](history []StepStats, log []E) ([][]E, error) {
	out := make([][]E, len(history))
	at := 0
	for k, h := range history {
		n := h.Episodes
		if n < 0 || at+n > len(log) {
			return nil, fmt.Errorf("log by step: step %d needs %d episodes, %d left in the log", k, n, len(log)-at)
		}
		out[k] = log[at : at+n : at+n]
		at += n
	}
	if at != len(log) {
		return nil, fmt.Errorf("log by step: %d steps hold %d episodes, the log has %d", len(history), at, len(log))
	}
	return out, nil
}

// Logged wraps every environment of factory in a LoggedEnv that appends to log.
func Logged(factory EnvFactory, log *[]Info) EnvFactory {
	return func() (Env, error) {
		env, err := factory()
		if err != nil {
			return nil, err
		}
		return &LoggedEnv{Env: env, Log: log}, nil
	}
}

// loggedTasks wraps every environment of factory in a taskLog of run whose task is the number of environments
// made before it: the sampler makes one per task of the step, in the order of the step's tasks.
func loggedTasks(factory EnvFactory, run *Run) EnvFactory {
	made := 0
	return func() (Env, error) {
		task := made
		made++
		env, err := factory()
		if err != nil {
			return nil, err
		}
		return &taskLog{Env: env, run: run, task: task}, nil
	}
}

// taskLog is LoggedEnv for a run: it appends the terminal Info of its episode to run.Log and the episode's task
// index to run.LogTask.
type taskLog struct {
	Env
	run  *Run
	task int
}

// Step delegates and logs the info of a terminal step.
func (l *taskLog) Step(action string) (string, float64, bool, Info) {
	obs, reward, done, info := l.Env.Step(action)
	if done {
		l.log(info)
	}
	return obs, reward, done, info
}

// Stop delegates and logs the terminal info.
func (l *taskLog) Stop(reason string) (float64, Info) {
	reward, info := l.Env.Stop(reason)
	l.log(info)
	return reward, info
}

func (l *taskLog) log(info Info) {
	l.run.Log = append(l.run.Log, info)
	l.run.LogTask = append(l.run.LogTask, l.task)
}
