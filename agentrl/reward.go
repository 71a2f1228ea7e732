package agentrl

import (
	"fmt"
	"math"
)

// Stop reasons of Info.Stop.
const (
	StopSubmitted = "submitted" // the policy submitted (or MixedTurnEnv graded a single-turn task)
	StopMaxTurns  = "max_turns" // the turn budget ran out
	StopTruncated = "truncated" // no room was left in the context for another call (set through Env.Stop by Episode)
	StopInvalid   = "invalid"   // EarlyStopEnv ended the episode after too many malformed calls
)

// Info is the terminal info of an episode (the book's info dict).
type Info struct {
	Submitted  bool   // info['submitted']: ended by a graded submission
	HiddenPass bool   // info['hidden_pass']: the final source passes the hidden tests
	NInvalid   int    // info['n_invalid']: malformed or unknown calls
	NTurns     int    // info['n_turns']: all calls, including malformed and refused ones
	NReads     int    // read calls
	NTests     int    // test calls
	NEdits     int    // edits applied (refused edits are not counted)
	Stop       string // info['stop']: one of the Stop* constants
}

// Solved reports whether the episode passed: submitted and hidden tests pass.
func (i Info) Solved() bool { return i.Submitted && i.HiddenPass }

// RewardFunc maps a terminal Info to the episode reward (the book's reward_fn).
type RewardFunc func(Info) float64

// RewardOptions are the shaping terms of MakeReward.
type RewardOptions struct {
	StepPenalty    float64 // subtracted per call beyond FreeCalls
	FreeCalls      int     // calls not charged the step penalty (0: every call is charged, as in the book)
	WrongSubmit    float64 // added when the policy submits a failing program (e.g. -1)
	InvalidPenalty float64 // subtracted per malformed call (NInvalid)
	// Unsubmitted is added when the episode ends without a submission (turn budget, context, early stop): 0 in
	// the book's reward; at most WrongSubmit makes running out of turns the worst outcome (Section 12.7's fix).
	Unsubmitted float64
}

// RewardHidden is the only reward kind: the hidden-test verdict.
const RewardHidden = "hidden"

// MakeReward is arl.make_reward:
//
//	R = [submitted ∧ hidden_pass] + WrongSubmit·[submitted ∧ ¬hidden_pass] + Unsubmitted·[¬submitted]
//	    − StepPenalty·max(NTurns − FreeCalls, 0) − InvalidPenalty·NInvalid
//
// so with the book's options an unsubmitted episode scores 0 before penalties. FreeCalls and Unsubmitted are
// ours, not the book's options: the "free allowance" remedy of Section 12.7's first design problem, and the
// default fix of its second (score an episode that runs out of turns no better than a wrong submission).
func MakeReward(kind string, opt RewardOptions) (RewardFunc, error) {
	if kind != RewardHidden {
		return nil, fmt.Errorf("make reward: unknown kind %q (want %q)", kind, RewardHidden)
	}
	if opt.FreeCalls < 0 {
		return nil, fmt.Errorf("make reward: %d free calls, want >= 0", opt.FreeCalls)
	}
	// A negative price is a payment: the agent learns to collect it until the turn limit instead of working (a
	// step penalty of -1 earns the default configuration about +6 an episode).
	if opt.StepPenalty < 0 {
		return nil, fmt.Errorf("make reward: step penalty %g < 0 pays every call, so the agent learns to stall until "+
			"its turn limit: use 0, or FreeCalls for calls that cost nothing", opt.StepPenalty)
	}
	if opt.InvalidPenalty < 0 {
		return nil, fmt.Errorf("make reward: invalid penalty %g < 0 pays every malformed call: use 0 or more", opt.InvalidPenalty)
	}
	for _, o := range []struct {
		name string
		v    float64
	}{{"step penalty", opt.StepPenalty}, {"wrong submit", opt.WrongSubmit}, {"invalid penalty", opt.InvalidPenalty},
		{"unsubmitted", opt.Unsubmitted}} {
		if math.IsNaN(o.v) || math.IsInf(o.v, 0) {
			return nil, fmt.Errorf("make reward: %s %g, want a finite number", o.name, o.v)
		}
	}
	return func(i Info) float64 {
		r := 0.0
		if i.Submitted && i.HiddenPass {
			r = 1
		} else if i.Submitted {
			r = opt.WrongSubmit
		} else {
			r = opt.Unsubmitted
		}
		return r - opt.StepPenalty*float64(max(i.NTurns-opt.FreeCalls, 0)) - opt.InvalidPenalty*float64(i.NInvalid)
	}, nil
}

// HiddenReward is MakeReward("hidden", RewardOptions{}): 1 for a passing submission, 0 otherwise.
func HiddenReward(i Info) float64 {
	if i.Submitted && i.HiddenPass {
		return 1
	}
	return 0
}
