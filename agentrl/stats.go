package agentrl

// Stats is arl.behavior_stats's dict: per-episode means over a set of episodes.
type Stats struct {
	PassRate       float64 // pass_rate: submitted and hidden tests pass
	SubmitRate     float64 // submitted
	Reads          float64 // reads per episode
	Tests          float64 // tests per episode
	Edits          float64 // applied edits per episode
	Turns          float64 // calls per episode, malformed and refused ones included
	Reward         float64 // mean reward
	InvalidPerTurn float64 // malformed calls per turn (sum NInvalid / sum NTurns)
	Episodes       int
}

// BehaviorStats is arl.behavior_stats.
func BehaviorStats(trajs []Trajectory) Stats {
	infos := make([]Info, len(trajs))
	for i, t := range trajs {
		infos[i] = t.Info
	}
	s := InfoStats(infos)
	for _, t := range trajs {
		s.Reward += t.Reward
	}
	if len(trajs) > 0 {
		s.Reward /= float64(len(trajs))
	}
	return s
}

// InfoStats is BehaviorStats from terminal infos alone (e.g. an env log); its Reward is 0.
func InfoStats(infos []Info) Stats {
	s := Stats{Episodes: len(infos)}
	if len(infos) == 0 {
		return s
	}
	var invalid, turns float64
	for _, i := range infos {
		if i.Solved() {
			s.PassRate++
		}
		if i.Submitted {
			s.SubmitRate++
		}
		s.Reads += float64(i.NReads)
		s.Tests += float64(i.NTests)
		s.Edits += float64(i.NEdits)
		turns += float64(i.NTurns)
		invalid += float64(i.NInvalid)
	}
	n := float64(len(infos))
	s.PassRate, s.SubmitRate, s.Reads, s.Tests, s.Edits, s.Turns = s.PassRate/n, s.SubmitRate/n, s.Reads/n, s.Tests/n, s.Edits/n, turns/n
	if turns > 0 {
		s.InvalidPerTurn = invalid / turns
	}
	return s
}
