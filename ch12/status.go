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

// Status gathers the store's events into a short block that is redrawn in place: one line that counts the results
// loaded from the store, one that counts those verified before they were served (store.Resumable) and how long
// that took, one per result computed (with its time), any other event (a warning, an interrupt) as its line, and a
// live line for the computation under way (its progress). When the work ends the live line goes, and what is left
// is the summary. Its Observe is a store.Store's observer; every line it shows is an event's line (Event.String)
// or a count of them.
type Status struct {
	show func(text string) // draws the block (text lines joined by "\n"); called with the lock held

	mu       sync.Mutex
	loaded   []string      // keys loaded from the store, in order, without repeats
	computed []string      // the lines of the results computed
	verified []string      // keys whose stored run was verified by its first step, without repeats
	serves   int           // how many serves were verified
	verifyIn time.Duration // the time they took, as their lines show it (to the tenth of a second)
	notes    []string      // the lines of other events, in order
	live     string        // the line of the computation under way, or ""
}

// NewStatus returns a Status that draws its block with show.
func NewStatus(show func(text string)) *Status { return &Status{show: show} }

// Observe takes one event and redraws the block. It may be called from more than one goroutine.
func (s *Status) Observe(e store.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.take(e)
	s.show(s.text())
}

// take files one event.
func (s *Status) take(e store.Event) {
	switch e.Kind {
	case store.Progressed, store.Computing, store.Waiting, store.Verifying:
		s.live = e.String()
	case store.Loaded:
		if !slices.Contains(s.loaded, e.Key) {
			s.loaded = append(s.loaded, e.Key)
		}
		s.live = ""
	case store.Computed:
		if e.Err != nil { // computed, but it could not be stored: a warning
			s.notes = append(s.notes, e.String())
			return
		}
		s.computed = append(s.computed, e.String())
		s.live = ""
	case store.Resuming:
		s.notes = append(s.notes, e.String()) // the summary keeps where the run went on from
		s.live = e.String()
	case store.Verified:
		if !slices.Contains(s.verified, e.Key) {
			s.verified = append(s.verified, e.Key)
		}
		s.serves++
		s.verifyIn += e.Took.Round(100 * time.Millisecond)
		s.live = ""
	default:
		s.notes = append(s.notes, e.String())
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
	out = append(out, s.computed...)
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

// installStatus makes the cell program's Status (one per program, whatever the number of stores) the observer of
// store's events, with a progress event at most every NotebookProgressInterval; outside GoNB it does nothing (the
// events' lines go to stderr).
func installStatus(s *store.Store) {
	if !gonbui.IsNotebook {
		return
	}
	s.Observe = cellStatus().Observe
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
