package store

import "time"

// DefaultProgressEvery is the least wall time between two progress lines of a long run unless its store's
// ProgressEvery says otherwise.
const DefaultProgressEvery = 15 * time.Second

// Progress tells the progress of a run of n steps (Progressed events: "name: step i/n, elapsed, remaining") at most
// every interval, and always at the end. Its lines start with "progress:" (the notebook harness drops them).
type Progress struct {
	tell     func(Event)
	key      string // the result the run computes, or ""
	name     string
	n        int
	first    int // the first step this process runs (a resumed run starts after 0)
	start    time.Time
	last     time.Time
	interval time.Duration
}

// NewProgress starts the progress of a run of n steps, told to the store's observer at most every ProgressEvery.
func (s *Store) NewProgress(name string, n int) *Progress {
	return newProgress(s.tell, s.progressEvery(), "", name, n)
}

// progressEvery is ProgressEvery, or its default.
func (s *Store) progressEvery() time.Duration {
	if s.ProgressEvery == 0 {
		return DefaultProgressEvery
	}
	return s.ProgressEvery
}

func newProgress(tell func(Event), interval time.Duration, key, name string, n int) *Progress {
	now := time.Now()
	return &Progress{tell: tell, key: key, name: name, n: n, start: now, last: now, interval: interval}
}

// ResumeAt makes the estimates count from step first, where a resumed run starts.
func (p *Progress) ResumeAt(first int) *Progress {
	p.first = first
	return p
}

// Done records that step i (0-based) finished, with an optional detail.
func (p *Progress) Done(i int, detail string) {
	now := time.Now()
	if i+1 < p.n && now.Sub(p.last) < p.interval {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start)
	eta := time.Duration(float64(elapsed) / float64(i+1-p.first) * float64(p.n-i-1))
	p.tell(Event{Kind: Progressed, Key: p.key, Name: p.name, Step: i + 1, Steps: p.n, Elapsed: elapsed,
		Remaining: eta, Detail: detail})
}
