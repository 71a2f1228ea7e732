package agentrl

import (
	"fmt"
	"io"
	"os"
	"time"
)

// ProgressOutput receives the progress lines of long runs (training loops, the base agent), which start with
// "progress:", and the result store's notices, which start with "cache:" (the notebook harness drops both).
var ProgressOutput io.Writer = os.Stderr

// ProgressInterval is the least wall time between two progress lines of a long run.
var ProgressInterval = 15 * time.Second

// Progress reports "name: step i/n, elapsed, remaining" on ProgressOutput at most every ProgressInterval, and
// always at the end.
type Progress struct {
	name     string
	n        int
	first    int // the first step this process runs (a resumed run starts after 0)
	start    time.Time
	last     time.Time
	interval time.Duration
}

// NewProgress starts the progress of a run of n steps.
func NewProgress(name string, n int) *Progress {
	now := time.Now()
	return &Progress{name: name, n: n, start: now, last: now, interval: ProgressInterval}
}

// resumeAt makes the estimates count from step first, where a resumed run starts.
func (p *Progress) resumeAt(first int) *Progress {
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
	fmt.Fprintf(ProgressOutput, "progress: %s step %d/%d | elapsed %s | remaining %s | %s\n", p.name, i+1, p.n,
		elapsed.Round(time.Second), eta.Round(time.Second), detail)
}
