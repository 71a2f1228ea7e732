package harness

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Progress is one line of progress for a run of several notebooks (the chapter), such as
//
//	chapter: 3/7 done, running 12.4 (cell 5/9), 12.5 (cell 2/8) | elapsed 4m10s | about 6m left
//
// On a terminal it is redrawn in place every second, below the log lines that Print and the notebooks' Output writers
// pass through it; elsewhere it is printed as one line each time it changes (a notebook starts or ends, a cell ends).
// The time left comes from the notebooks' expected times (Expected: the last run's on this machine, TimesFile, else
// what their committed outputs computed that the store does not hold), scaled by how this run's finished notebooks
// compare with theirs, and, for a notebook without one, from this run's time per cell; where no notebook has a time
// the time left is unknown, and the line says so. The notebooks left are laid out on the run's slots in order, as
// ForEach starts them. Its methods may be called from any goroutine.
type Progress struct {
	mu     sync.Mutex
	w      io.Writer
	tty    bool
	width  int // the terminal's columns; 0 unknown
	jobs   int
	start  time.Time
	now    func() time.Time
	nbs    []nbState
	closed bool
	shown  string // on a terminal, the line drawn ("" none); elsewhere, the status last printed (the line up to its clock)
	stop   chan struct{}
	ended  chan struct{}
}

type nbPhase int

const (
	pending nbPhase = iota
	running
	finished
	skipped
)

type nbState struct {
	section           string
	cells, done       int           // code cells to execute, and executed
	prior             time.Duration // its wall time in the last run; 0 unknown
	phase             nbPhase
	failed            bool
	started, lastCell time.Time
	wall              time.Duration
}

// NewProgress returns the progress line, written to w, of a run of the notebooks at paths with jobs at once; prior
// holds notebooks' wall times in the last run by file name (ReadTimes), nil for none. Close it at the end.
func NewProgress(w io.Writer, paths []string, jobs int, prior map[string]time.Duration) *Progress {
	p := &Progress{w: w, jobs: max(1, jobs), now: time.Now, stop: make(chan struct{}), ended: make(chan struct{})}
	p.start = p.now()
	for _, path := range paths {
		n := nbState{section: Section(path), prior: prior[filepath.Base(path)]}
		if nb, err := Load(path); err == nil {
			for _, c := range nb.CodeCells() {
				if strings.TrimSpace(string(c.Source)) != "" { // the cells execute.py counts
					n.cells++
				}
			}
		}
		p.nbs = append(p.nbs, n)
	}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb" {
			p.tty, p.width = true, termWidth(f)
		}
	}
	if p.tty {
		go p.tick()
	} else {
		close(p.ended)
	}
	return p
}

func (p *Progress) tick() {
	defer close(p.ended)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if !p.closed {
				p.changed()
			}
			p.mu.Unlock()
		}
	}
}

// Start says the i-th notebook started.
func (p *Progress) Start(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := &p.nbs[i]
	n.phase, n.started, n.done = running, p.now(), 0
	p.changed()
}

// Finish says the i-th notebook ended, failed or not.
func (p *Progress) Finish(i int, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := &p.nbs[i]
	if n.phase != running {
		return
	}
	n.phase, n.failed, n.wall = finished, failed, p.now().Sub(n.started)
	p.changed()
}

// Skip says the i-th notebook will not run after all (a test filtered out): the line no longer counts it. A
// notebook that started is not skipped.
func (p *Progress) Skip(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nbs[i].phase == pending {
		p.nbs[i].phase = skipped
		if p.tty { // elsewhere no line for it: the next change prints one
			p.changed()
		}
	}
}

// Print writes text to w, which may be the progress line's writer or another on the same terminal: on a terminal the
// line is cleared first and drawn again below the text.
func (p *Progress) Print(w io.Writer, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.print(w, text)
}

func (p *Progress) print(w io.Writer, text string) {
	if p.tty && p.shown != "" {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = ""
	}
	io.WriteString(w, text)
	if p.tty {
		p.changed()
	}
}

// Close stops the redrawing and leaves the last line, ending it.
func (p *Progress) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.stop)
	p.changed()
	if p.tty && p.shown != "" {
		io.WriteString(p.w, "\n")
		p.shown = ""
	}
	p.mu.Unlock()
	<-p.ended
}

// changed draws the line again on a terminal, and elsewhere prints it when its status changed. With no notebook to
// run (all skipped) there is no line. p.mu is held.
func (p *Progress) changed() {
	line, status := p.line(p.now())
	if line == "" {
		if p.tty && p.shown != "" {
			io.WriteString(p.w, "\r\x1b[K")
		}
		p.shown = ""
		return
	}
	if p.tty {
		if p.width > 1 && len(line) >= p.width {
			line = line[:p.width-1]
		}
		io.WriteString(p.w, "\r"+line+"\x1b[K")
		p.shown = line
		return
	}
	if status != p.shown {
		io.WriteString(p.w, line+"\n")
		p.shown = status
	}
}

// Line returns the progress line as it reads now ("" with no notebook to run).
func (p *Progress) Line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	line, _ := p.line(p.now())
	return line
}

// line returns the line at now, and its status: the line up to its clock; both "" with no notebook to run.
func (p *Progress) line(now time.Time) (line, status string) {
	total, done, failed := 0, 0, 0
	var run []string
	for _, n := range p.nbs {
		switch n.phase {
		case skipped:
			continue
		case finished:
			done++
			if n.failed {
				failed++
			}
		case running:
			cell := n.done + 1 // the one executing
			if n.cells > 0 && cell > n.cells {
				cell = n.cells
			}
			if n.cells > 0 {
				run = append(run, fmt.Sprintf("%s (cell %d/%d)", n.section, cell, n.cells))
			} else {
				run = append(run, n.section)
			}
		}
		total++
	}
	if total == 0 {
		return "", ""
	}
	status = fmt.Sprintf("chapter: %d/%d done", done, total)
	if failed > 0 {
		status += fmt.Sprintf(" (%d failed)", failed)
	}
	if len(run) > 0 {
		status += ", running " + strings.Join(run, ", ")
	}
	line = status + " | elapsed " + clock(now.Sub(p.start))
	if done < total {
		if left, ok := p.left(now); ok {
			line += " | about " + about(left) + " left"
		} else {
			line += " | time left unknown (no times recorded for these notebooks)"
		}
	}
	return line, status
}

// left estimates the time until the last notebook ends: the running notebooks' time left and then the pending ones
// in order, each on the run's slot that is free first, at the run's pace; false when a notebook's time is unknown.
// p.mu is held.
func (p *Progress) left(now time.Time) (time.Duration, bool) {
	pc := paceOf(p.nbs)
	var slots []time.Duration // when each of the run's slots is free, from now
	for _, n := range p.nbs {
		if n.phase != running {
			continue
		}
		e, ok := pc.expect(n)
		if !ok {
			return 0, false
		}
		rest := e - now.Sub(n.started)
		if rest <= 0 { // longer than expected: the cells left at this run's pace
			rest = pc.perCell * time.Duration(max(0, n.cells-n.done))
		}
		slots = append(slots, rest)
	}
	for len(slots) < p.jobs {
		slots = append(slots, 0)
	}
	for _, n := range p.nbs {
		if n.phase != pending {
			continue
		}
		e, ok := pc.expect(n)
		if !ok {
			return 0, false
		}
		k := 0
		for j := range slots {
			if slots[j] < slots[k] {
				k = j
			}
		}
		slots[k] += e
	}
	var end time.Duration
	for _, s := range slots {
		end = max(end, s)
	}
	return end, true
}

// pace is how fast a run executes notebooks, compared with the last run.
type pace struct {
	// ratio is this run's wall time over the last run's, over the notebooks that finished cleanly and have one (the
	// store may be warm now and was cold then, or the other way round); 1 before any.
	ratio float64
	// perCell is this run's time per executed cell, or before any cell the last run's, scaled by ratio; 0 unknown,
	// and always where no notebook has a recorded time.
	perCell time.Duration
}

// paceOf measures the pace of a run from its notebooks' states.
func paceOf(nbs []nbState) pace {
	var actual, prior, observed, priorCellTime time.Duration
	observedCells, priorCells := 0, 0
	for _, n := range nbs {
		switch {
		case n.phase == finished && !n.failed:
			if n.prior > 0 {
				actual += n.wall
				prior += n.prior
			}
			observed += n.wall
			observedCells += n.cells
		case n.phase == running && n.done > 0:
			observed += n.lastCell.Sub(n.started)
			observedCells += n.done
		}
		if n.prior > 0 && n.cells > 0 {
			priorCellTime += n.prior
			priorCells += n.cells
		}
	}
	pc := pace{ratio: 1.0}
	if prior > 0 {
		pc.ratio = float64(actual) / float64(prior)
	}
	switch {
	case priorCells == 0:
		// Nothing recorded: a cell's time says nothing of the next one's (a cell that trains a run takes minutes,
		// one that prints a table less than a second), so the time left is unknown, not a guess.
	case observedCells > 0:
		pc.perCell = observed / time.Duration(observedCells)
	default:
		pc.perCell = pc.scale(priorCellTime / time.Duration(priorCells))
	}
	return pc
}

// scale is d, a time of the last run, at this run's pace.
func (pc pace) scale(d time.Duration) time.Duration { return time.Duration(float64(d) * pc.ratio) }

// expect is how long notebook n takes in all: its time in the last run scaled, or else its cells at perCell; false
// when neither is known.
func (pc pace) expect(n nbState) (time.Duration, bool) {
	if n.prior > 0 {
		return pc.scale(n.prior), true
	}
	if pc.perCell > 0 && n.cells > 0 {
		return pc.perCell * time.Duration(n.cells), true
	}
	return 0, false
}

// clock formats an elapsed time: 45s, 4m10s, 1h02m.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}

// about formats an estimate: to 10 seconds under a minute and a half, else to the minute (6m, 1h05m).
func about(d time.Duration) string {
	if d < 90*time.Second {
		return clock(max(10*time.Second, (d + 9*time.Second).Truncate(10*time.Second)))
	}
	m := int(d.Round(time.Minute) / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

// cellDone matches execute.py's line for a cell executed: "nbexec: cell 3/9 [...] 1.2s".
var cellDone = regexp.MustCompile(`^nbexec: cell (\d+)/(\d+) `)

// NotebookLog is the log of one notebook of a Progress: see Output.
type NotebookLog struct {
	p   *Progress
	i   int
	log io.Writer
	buf []byte
}

// Output returns the writer for the i-th notebook's log (a Runner's Log): it passes each whole line to log, prefixed
// with the notebook's section ("12.4: "), through Print, and follows its cells from execute.py's lines. Flush it
// when the notebook ends.
func (p *Progress) Output(i int, log io.Writer) *NotebookLog {
	return &NotebookLog{p: p, i: i, log: log}
}

func (l *NotebookLog) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	l.buf = append(l.buf, b...)
	for {
		k := bytes.IndexByte(l.buf, '\n')
		if k < 0 {
			break
		}
		l.line(string(l.buf[:k]))
		l.buf = l.buf[k+1:]
	}
	return len(b), nil
}

// Flush passes on the last line if it did not end.
func (l *NotebookLog) Flush() {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	if len(l.buf) > 0 {
		l.line(string(l.buf))
		l.buf = nil
	}
}

// line passes one line on. l.p.mu is held.
func (l *NotebookLog) line(s string) {
	p := l.p
	n := &p.nbs[l.i]
	p.print(l.log, n.section+": "+s+"\n")
	if m := cellDone.FindStringSubmatch(s); m != nil && n.phase == running {
		n.done, _ = strconv.Atoi(m[1])
		if cells, err := strconv.Atoi(m[2]); err == nil && cells > 0 {
			n.cells = cells
		}
		n.lastCell = p.now()
		p.changed()
	}
}
