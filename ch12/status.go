package ch12

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentrl-go/agentrl/chart/nbdisplay"
	"github.com/agentrl-go/agentrl/store"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/protocol"
)

// Status gathers agentrl's notices (lines starting "cache:" or "progress:") into a short block that is redrawn in
// place: one line that counts the results loaded from the store, one that counts those verified before they were
// served (store.Resumable) and how long that took, one per result computed (with its time), any
// other notice (a warning, an interrupt) as it came, and a live line for the computation under way. When the
// work ends the live line goes, and what is left is the summary. It is an io.Writer for a store.Store's
// Notices; a line that is not a notice is kept as it came.
type Status struct {
	show func(text string) // draws the block (text lines joined by "\n"); called with the lock held

	mu       sync.Mutex
	partial  string        // an incomplete last line
	loaded   []string      // keys loaded from the store, in order, without repeats
	computed []string      // "key in 12s"
	verified []string      // keys whose stored run was verified by its first step, without repeats
	serves   int           // how many serves were verified
	verifyIn time.Duration // the time they took
	notes    []string      // other notices, in order
	live     string        // the computation under way, or ""
}

// NewStatus returns a Status that draws its block with show.
func NewStatus(show func(text string)) *Status { return &Status{show: show} }

// Write takes notices, one or more lines at a time (a line may arrive in pieces), and redraws the block.
func (s *Status) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := s.partial + string(p)
	lines := strings.Split(text, "\n")
	s.partial = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		s.take(strings.TrimRight(l, "\r"))
	}
	if len(lines) > 1 {
		s.show(s.text())
	}
	return len(p), nil
}

// take files one notice.
func (s *Status) take(line string) {
	rest, isCache := strings.CutPrefix(line, "cache: ")
	switch {
	case strings.HasPrefix(line, "progress: "):
		s.live = line
	case isCache && strings.HasPrefix(rest, "loaded "):
		key := strings.TrimPrefix(rest, "loaded ")
		if !slices.Contains(s.loaded, key) {
			s.loaded = append(s.loaded, key)
		}
		s.live = ""
	case isCache && strings.HasPrefix(rest, "computed ") && !strings.Contains(rest, "could not"):
		s.computed = append(s.computed, strings.TrimPrefix(rest, "computed "))
		s.live = ""
	case isCache && strings.HasPrefix(rest, "resuming "):
		s.notes = append(s.notes, line) // the summary keeps where the run went on from
		s.live = line
	case isCache && strings.HasPrefix(rest, "verified "):
		fields := strings.Fields(strings.TrimPrefix(rest, "verified "))
		if !slices.Contains(s.verified, fields[0]) {
			s.verified = append(s.verified, fields[0])
		}
		s.serves++
		if len(fields) == 3 && fields[1] == "in" {
			if d, err := time.ParseDuration(fields[2]); err == nil {
				s.verifyIn += d
			}
		}
		s.live = ""
	case isCache && (strings.HasPrefix(rest, "computing ") || strings.HasPrefix(rest, "waiting ") ||
		strings.HasPrefix(rest, "verifying ")):
		s.live = line
	case strings.TrimSpace(line) == "":
	default:
		s.notes = append(s.notes, line)
	}
}

// text is the block: the summary, then the notes, then the live line.
func (s *Status) text() string {
	var out []string
	switch n := len(s.loaded); {
	case n == 1:
		out = append(out, "cache: loaded "+s.loaded[0])
	case n > 1:
		out = append(out, fmt.Sprintf("cache: loaded %d stored results (%s)", n, abbreviate(s.loaded, 3)))
	}
	switch {
	case s.serves == 1:
		out = append(out, fmt.Sprintf("cache: verified %s by its first step again in %s", s.verified[0], s.verifyIn))
	case s.serves > 1:
		out = append(out, fmt.Sprintf("cache: verified %d serves of %d by their first step again in %s (%s)", s.serves,
			len(s.verified), s.verifyIn, abbreviate(s.verified, 3)))
	}
	for _, c := range s.computed {
		out = append(out, "cache: computed "+c)
	}
	out = append(out, s.notes...)
	if s.live != "" {
		out = append(out, s.live)
	}
	return strings.Join(out, "\n")
}

// abbreviate lists the first n items and how many more there are.
func abbreviate(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// NotebookProgressInterval is the least time between two progress lines in a notebook, where a line is redrawn in
// place rather than appended.
const NotebookProgressInterval = 2 * time.Second

// cellStatus is the cell program's Status, drawn as one GoNB display, made on first use.
var cellStatus = sync.OnceValue(func() *Status {
	id, shown := "agentrl-status-"+gonbui.UniqueID(), false
	return NewStatus(func(text string) {
		gonbui.SendData(statusDisplay(id, text))
		if !shown { // the block's place is where it first shows: above what the cell prints next
			shown = true
			nbdisplay.SyncWithin(time.Second) // the status block shows before the stdout written after it
		}
	})
})

// installStatus makes the cell program's Status (one per program, whatever the number of stores) the
// destination of store's notices and progress lines, with a progress line at most every
// NotebookProgressInterval; outside GoNB it does nothing (the notices go to stderr).
func installStatus(s *store.Store) {
	if !gonbui.IsNotebook {
		return
	}
	s.Notices = cellStatus()
	s.ProgressEvery = NotebookProgressInterval
}

// statusDisplay is the display that shows text: plain text, and the same as small grey preformatted HTML.
func statusDisplay(id, text string) *protocol.DisplayData {
	return &protocol.DisplayData{
		Data: map[protocol.MIMEType]any{
			protocol.MIMETextPlain: text,
			protocol.MIMETextHTML: `<pre style="margin:0;color:#777;font-size:85%">` + html.EscapeString(text) +
				"</pre>",
		},
		DisplayID: id,
	}
}
