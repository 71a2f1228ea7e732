// Package recipe parses a candidate for the calibration search: the base agent's demonstration mix, the gym's
// observation format and the RL update, written as "key=value" settings over the chapter's defaults, e.g.
// "late-submit=0.15 stall-test=0.5 obs=terse lr=3e-4". cmd/calibrate scores candidates at step 0, and cmd/seeds
// runs one under RL seeds, from the same text.
package recipe

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
)

// Candidate is one point of the search: a name and the configurations its settings make.
type Candidate struct {
	Name     string
	Settings string // the settings as written, normalized to single spaces
	Base     agentrl.BaseConfig
	RL       agentrl.RLConfig
	Tasks    agentrl.TaskGen // the task generator (issue #41's knobs); the zero value is the chapter's tasks
}

// taskSetting applies one value to the task generator.
type taskSetting struct {
	help  string
	apply func(g *agentrl.TaskGen, v string) error
}

// taskSettings are the keys that set the task generator.
var taskSettings = map[string]taskSetting{
	"distractors": {"correct sites written with a bug's tokens, 0 to 3 (TaskGen.Distractors)", func(g *agentrl.TaskGen, v string) error {
		x, err := strconv.Atoi(v)
		g.Distractors = x
		return err
	}},
	"hard": {"share of tasks with a second guard: 0, 0.5 or 1 (TaskGen.HardShare)", func(g *agentrl.TaskGen, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		g.HardShare = x
		return err
	}},
	"shared-issues":  taskBool("one wording for each block of five tasks: true or false (TaskGen.SharedIssues)", func(g *agentrl.TaskGen) *bool { return &g.SharedIssues }),
	"seen-issues":    taskBool("held-out blocks worded as training blocks (with shared-issues): true or false (TaskGen.SeenIssues)", func(g *agentrl.TaskGen) *bool { return &g.SeenIssues }),
	"redraw-forms":   taskBool("every episode writes the task in another choice of its distractor sites: true or false (TaskGen.RedrawForms)", func(g *agentrl.TaskGen) *bool { return &g.RedrawForms }),
	"strict-visible": taskBool("visible tests that catch every wrong op: true or false (TaskGen.StrictVisible)", func(g *agentrl.TaskGen) *bool { return &g.StrictVisible }),
	"task-seed": {"seed of the tasks' names, limits and tests; 0 is the chapter's (TaskGen.Seed)", func(g *agentrl.TaskGen, v string) error {
		x, err := strconv.ParseUint(v, 10, 64)
		g.Seed = x
		return err
	}},
}

// taskBool is a task setting of a boolean knob, written true or false.
func taskBool(help string, knob func(g *agentrl.TaskGen) *bool) taskSetting {
	return taskSetting{help, func(g *agentrl.TaskGen, v string) error {
		x, err := strconv.ParseBool(v)
		*knob(g) = x
		return err
	}}
}

// setting applies one value to the configurations.
type setting struct {
	help  string
	apply func(b *agentrl.BaseConfig, r *agentrl.RLConfig, v string) error
}

func float(f func(b *agentrl.BaseConfig, r *agentrl.RLConfig) *float64, help string) setting {
	return setting{help, func(b *agentrl.BaseConfig, r *agentrl.RLConfig, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", v)
		}
		*f(b, r) = x
		return nil
	}}
}

func integer(f func(b *agentrl.BaseConfig, r *agentrl.RLConfig) *int, help string) setting {
	return setting{help, func(b *agentrl.BaseConfig, r *agentrl.RLConfig, v string) error {
		x, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		*f(b, r) = x
		return nil
	}}
}

// distribution parses "p0/p1/...", probabilities of 0, 1, ... tests.
func distribution(f func(b *agentrl.BaseConfig) *[]float64, help string) setting {
	return setting{help, func(b *agentrl.BaseConfig, _ *agentrl.RLConfig, v string) error {
		var ps []float64
		for _, part := range strings.Split(v, "/") {
			x, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return fmt.Errorf("%q is not a list of numbers separated by /", v)
			}
			ps = append(ps, x)
		}
		*f(b) = ps
		return nil
	}}
}

// settings are the keys a candidate may set.
var settings = map[string]setting{
	"base-seed": {"seed of the demonstrations and the supervised training (BaseConfig.Seed)",
		func(b *agentrl.BaseConfig, _ *agentrl.RLConfig, v string) error {
			x, err := strconv.ParseUint(v, 10, 64)
			b.Seed = x
			if err != nil {
				return fmt.Errorf("%q is not a seed", v)
			}
			return nil
		}},
	"submit-first":   float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.SubmitFirstProb }, "BaseConfig.SubmitFirstProb"),
	"read":           float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.ReadProb }, "BaseConfig.ReadProb"),
	"read-right":     float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.ReadRightProb }, "BaseConfig.ReadRightProb"),
	"submit":         float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.SubmitProb }, "BaseConfig.SubmitProb (else the demonstration stalls)"),
	"stall-test":     float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.StallTestProb }, "BaseConfig.StallTestProb"),
	"stall-on-fail":  float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.StallOnFailProb }, "BaseConfig.StallOnFailProb"),
	"late-submit":    float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.LateSubmitProb }, "BaseConfig.LateSubmitProb"),
	"malformed-prob": float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.MalformedProb }, "BaseConfig.MalformedProb"),
	"mapping-right":  float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.MappingRightProb }, "BaseConfig.MappingRightProb"),
	"reread":         float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.RereadProb }, "BaseConfig.RereadProb"),
	"give-up":        float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.GiveUpAfterReadProb }, "BaseConfig.GiveUpAfterReadProb"),
	"read-weight":    float(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *float64 { return &b.ReadChoiceWeight }, "BaseConfig.ReadChoiceWeight"),
	"mapping-demos":  integer(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *int { return &b.MappingDemos }, "BaseConfig.MappingDemos"),
	"demos":          integer(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *int { return &b.Demos }, "BaseConfig.Demos"),
	"base-steps":     integer(func(b *agentrl.BaseConfig, _ *agentrl.RLConfig) *int { return &b.Steps }, "BaseConfig.Steps"),
	"tests":          distribution(func(b *agentrl.BaseConfig) *[]float64 { return &b.TestsAfterEdit }, "BaseConfig.TestsAfterEdit, e.g. 0.05/0.9/0.05"),
	"blind-tests":    distribution(func(b *agentrl.BaseConfig) *[]float64 { return &b.BlindTestsAfterEdit }, "BaseConfig.BlindTestsAfterEdit, e.g. 0.5/0.5"),
	"malformed": {"the demonstrations' slips: near_miss or unknown_tool (BaseConfig.Malformed)",
		func(b *agentrl.BaseConfig, _ *agentrl.RLConfig, v string) error {
			switch v {
			case "near_miss":
				b.Malformed = agentrl.MalformedNearMiss
			case string(agentrl.MalformedUnknownTool):
				b.Malformed = agentrl.MalformedUnknownTool
			default:
				return fmt.Errorf("%q: want near_miss or unknown_tool", v)
			}
			return nil
		}},
	"obs": {"the gym's observation format, echo, terse or inputs, for the demonstrations and the runs (RLConfig.Obs, BaseConfig.Obs)",
		func(b *agentrl.BaseConfig, r *agentrl.RLConfig, v string) error {
			f := agentrl.ObsFormat(v)
			if v == "echo" {
				f = agentrl.ObsEcho
			}
			if v == "" || f.Validate() != nil {
				return fmt.Errorf("%q: want echo, %s or %s", v, agentrl.ObsTerse, agentrl.ObsInputs)
			}
			b.Obs, r.Obs = f, f
			return nil
		}},
	"lr": float(func(_ *agentrl.BaseConfig, r *agentrl.RLConfig) *float64 { return &r.LR }, "RLConfig.LR"),
}

// Keys lists the settings a candidate may use, one per line with what it sets.
func Keys() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		fmt.Fprintf(&b, "  %-15s %s\n", k, settings[k].help)
	}
	for _, k := range slices.Sorted(maps.Keys(taskSettings)) {
		fmt.Fprintf(&b, "  %-15s %s\n", k, taskSettings[k].help)
	}
	return b.String()
}

// Parse applies settings ("key=value ...", blank for the chapter's own configuration) to DefaultBaseConfig and
// DefaultRLConfig and validates the result; the error names every bad setting.
func Parse(name, text string) (Candidate, error) {
	c := Candidate{Name: name, Settings: strings.Join(strings.Fields(text), " "),
		Base: agentrl.DefaultBaseConfig(), RL: agentrl.DefaultRLConfig()}
	var errs []error
	seen := map[string]bool{}
	for _, field := range strings.Fields(text) {
		k, v, ok := strings.Cut(field, "=")
		s, known := settings[k]
		if ts, task := taskSettings[k]; task && ok && !seen[k] {
			seen[k] = true
			if err := ts.apply(&c.Tasks, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %q: %w", k, v, err))
			}
			continue
		}
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%q: want key=value", field))
		case !known:
			errs = append(errs, fmt.Errorf("%q: unknown setting %q (known: %s)", field, k, strings.Join(slices.Sorted(maps.Keys(settings)), ", ")))
		case seen[k]:
			errs = append(errs, fmt.Errorf("%q: %s set twice", field, k))
		default:
			seen[k] = true
			if err := s.apply(&c.Base, &c.RL, v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", k, err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Candidate{}, fmt.Errorf("candidate %s: %w", name, err)
	}
	if err := errors.Join(c.Base.Validate(), c.RL.Validate(), c.Tasks.Validate()); err != nil {
		return Candidate{}, fmt.Errorf("candidate %s: %w", name, err)
	}
	return c, nil
}

// ParseFile parses a list of candidates, one per line: a name, then its settings; blank lines and lines starting
// with # are skipped. Names must be unique.
func ParseFile(text string) ([]Candidate, error) {
	var out []Candidate
	var errs []error
	names := map[string]int{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		if prev, dup := names[name]; dup {
			errs = append(errs, fmt.Errorf("line %d: candidate %s already named on line %d", i+1, name, prev))
			continue
		}
		names[name] = i + 1
		c, err := Parse(name, rest)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", i+1, err))
			continue
		}
		out = append(out, c)
	}
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no candidate: write one per line, a name then key=value settings"))
	}
	return out, errors.Join(errs...)
}
