package store

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
)

// TestEventString checks the line of each kind of event against the line the store wrote before it told events:
// each want is made with the format and arguments of that line (notef's, Progress.Done's), so that a command and
// a notebook print what they printed.
func TestEventString(t *testing.T) {
	disk := errors.New("disk full")
	tests := []struct {
		e    Event
		want string
	}{
		{Event{Kind: Loaded, Key: "k"}, fmt.Sprintf("cache: loaded %s\n", "k")},
		{Event{Kind: Unusable, Key: "k", Err: errors.New("checksum mismatch")},
			fmt.Sprintf("cache: %s unusable (%v): recomputing\n", "k", errors.New("checksum mismatch"))},
		{Event{Kind: Waiting, Key: "k"}, fmt.Sprintf("cache: waiting for %s (another process is computing it)\n", "k")},
		{Event{Kind: LockFailed, Key: "k", Err: os.ErrPermission},
			fmt.Sprintf("cache: cannot lock %s (%v): computing it without waiting for other processes\n", "k",
				os.ErrPermission)},
		{Event{Kind: Computing, Key: "k"},
			fmt.Sprintf("cache: computing %s (an interrupt saves its progress for the next run)\n", "k")},
		{Event{Kind: Computing, Key: "k", Reads: []string{"$HOME", "/etc/x"}},
			fmt.Sprintf("cache: computing %s (its code reads %s, which no key can hold: not stored)\n", "k",
				"$HOME, /etc/x")},
		{Event{Kind: Computed, Key: "k", Took: 9*time.Second + 400*time.Millisecond},
			fmt.Sprintf("cache: computed %s in %s\n", "k", (9*time.Second + 400*time.Millisecond).Round(time.Second))},
		{Event{Kind: Computed, Key: "k", Took: 73600 * time.Millisecond},
			fmt.Sprintf("cache: computed %s in %s\n", "k", (73600 * time.Millisecond).Round(time.Second))},
		{Event{Kind: Computed, Key: "k", Took: time.Second, Reads: []string{"$HOME"}},
			fmt.Sprintf("cache: computed %s in %s, not stored (its code reads %s)\n", "k", time.Second, "$HOME")},
		{Event{Kind: Computed, Key: "k", Took: time.Second, Err: disk},
			fmt.Sprintf("cache: computed %s in %s but could not store it: %v\n", "k", time.Second, disk)},
		{Event{Kind: Resuming, Key: "k.partial", Step: 3}, fmt.Sprintf("cache: resuming %s after step %d\n", "k.partial", 3)},
		{Event{Kind: StartOver, Key: "k.partial", Err: disk},
			fmt.Sprintf("cache: %s unusable (%v): starting over\n", "k.partial", disk)},
		{Event{Kind: SaveFailed, Key: "k.partial", Step: 3, Err: disk},
			fmt.Sprintf("cache: could not save progress after step %d: %v\n", 3, disk)},
		{Event{Kind: Interrupted, Key: "k.partial"},
			fmt.Sprintf("cache: interrupt: stopping at the end of the current step or within 3s (the first: nothing to save yet)\n")},
		{Event{Kind: Interrupted, Key: "k.partial", Step: 2, Err: disk},
			fmt.Sprintf("cache: interrupt: could not save progress after step %d: %v\n", 2, disk)},
		{Event{Kind: Interrupted, Key: "k.partial", Step: 2},
			fmt.Sprintf("cache: interrupt: progress after step %d saved; stopping at the end of the current step or within 3s\n", 2)},
		{Event{Kind: RemoveFailed, Key: "k.partial", Err: disk},
			fmt.Sprintf("cache: could not remove %s: %v\n", "k.partial", disk)},
		{Event{Kind: Verifying, Key: "k", Why: "the code of main.X"},
			fmt.Sprintf("cache: verifying %s (its first step again: %s)\n", "k", "the code of main.X")},
		{Event{Kind: Verified, Key: "k", Took: 432 * time.Millisecond},
			fmt.Sprintf("cache: verified %s in %s\n", "k", (432 * time.Millisecond).Round(100*time.Millisecond))},
		{Event{Kind: Otherwise, Key: "k", Why: "the code of main.X", Differs: "in reward"},
			fmt.Sprintf("cache: %s: the stored run was computed otherwise (its first step differs: %s; the key holds %s, not "+
				"what it reads at run time): computing it again\n", "k", "in reward", "the code of main.X")},
		{Event{Kind: RecordFailed, Key: "k", Err: disk},
			fmt.Sprintf("cache: could not store the record of %s's first step: %v\n", "k", disk)},
		{Event{Kind: DescribeFailed, Key: "k", Err: disk}, fmt.Sprintf("cache: could not describe %s: %v\n", "k", disk)},
		{Event{Kind: Progressed, Key: "k", Name: "train_grpo", Step: 3, Steps: 40, Elapsed: 2600 * time.Millisecond,
			Remaining: 31 * time.Second, Detail: "reward 0.25"},
			fmt.Sprintf("progress: %s step %d/%d | elapsed %s | remaining %s | %s\n", "train_grpo", 2+1, 40,
				(2600 * time.Millisecond).Round(time.Second), (31 * time.Second).Round(time.Second), "reward 0.25")},
	}
	kinds := map[Kind]bool{}
	for _, tt := range tests {
		kinds[tt.e.Kind] = true
		if got := tt.e.String() + "\n"; got != tt.want {
			t.Errorf("%+v:\n%q\nwant\n%q", tt.e, got, tt.want)
		}
	}
	for k := Loaded; k <= Progressed; k++ {
		if !kinds[k] {
			t.Errorf("kind %d has no line in the table", k)
		}
	}
}

// TestEvents checks the events each path of Cached and Resumable tells, in a program that opens the store after
// prepare.
func TestEvents(t *testing.T) {
	k := codekey.Keyed{Key: "k"}
	answer := func() (int, error) { return 42, nil }
	cached := func(s *Store) error { _, err := Cached(s, k, intCodec, answer); return err }
	verified := func(record string) func(s *Store) error { // a Resumable whose first step's record is record
		return func(s *Store) error {
			first := func() ([]byte, error) { return []byte(record), nil }
			_, err := Resumable(s, codekey.Keyed{Key: "k", Outside: []string{"main.X"}}, intCodec, first,
				func(r *Resume) (int, error) { r.FirstStep([]byte(record)); return 42, nil })
			return err
		}
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, s *Store)
		call    func(s *Store) error
		want    []Kind
	}{
		{"computed", func(*testing.T, *Store) {}, cached, []Kind{Computed}},
		{"loaded", func(t *testing.T, s *Store) { cachedInt(t, s) }, cached, []Kind{Loaded}},
		{"unusable", func(t *testing.T, s *Store) { cachedInt(t, s); flipLastByte(t, s.path("k")) }, cached,
			[]Kind{Unusable, Computed}},
		{"not stored", func(*testing.T, *Store) {}, func(s *Store) error {
			_, err := Cached(s, codekey.Keyed{Key: "k", Open: []string{"$HOME"}}, intCodec, answer)
			return err
		}, []Kind{Computing, Computed}},
		{"resumable, with progress", func(*testing.T, *Store) {}, func(s *Store) error {
			_, err := Resumable(s, k, intCodec, nil, func(r *Resume) (int, error) {
				p := r.Progress("answer", 2, 0)
				p.Done(0, "")
				p.Done(1, "done")
				return 42, nil
			})
			return err
		}, []Kind{Computing, Progressed, Computed}},
		{"verified", func(t *testing.T, s *Store) { must(t, verified("a=1")(s)) }, verified("a=1"),
			[]Kind{Verifying, Verified, Loaded}},
		{"computed otherwise", func(t *testing.T, s *Store) { must(t, verified("a=1")(s)) }, verified("a=2"),
			[]Kind{Verifying, Otherwise, Computing, Computed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustStore(t)
			tt.prepare(t, s)
			s = mustOpen(t, s.Dir())
			var mu sync.Mutex
			var got []Event
			s.Observe = func(e Event) { mu.Lock(); got = append(got, e); mu.Unlock() }
			if err := tt.call(s); err != nil {
				t.Fatal(err)
			}
			var kinds []Kind
			for _, e := range got {
				kinds = append(kinds, e.Kind)
				if e.Key != "k" {
					t.Errorf("%v: key %q, want k", e, e.Key)
				}
				if e.Kind == Progressed && (e.Name != "answer" || e.Step != 2 || e.Steps != 2 || e.Detail != "done") {
					t.Errorf("progress %+v, want the last step of answer's 2", e)
				}
			}
			if !slices.Equal(kinds, tt.want) {
				t.Errorf("kinds %v, want %v; events %v", kinds, tt.want, got)
			}
		})
	}
}

// TestDefaultObserver checks that a store without an observer writes each event's line to Notices, one Write a
// line, and that events told from several goroutines at once come out as whole lines.
func TestDefaultObserver(t *testing.T) {
	s := mustStore(t)
	var w writes
	s.Notices = &w
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.NewProgress(fmt.Sprint("run ", i), 1).Done(0, "")
		}()
	}
	wg.Wait()
	if _, err := Cached(s, codekey.Keyed{Key: "k"}, intCodec, func() (int, error) { return 42, nil }); err != nil {
		t.Fatal(err)
	}
	if len(w.lines) != 9 {
		t.Fatalf("%d writes, want 9: %q", len(w.lines), w.lines)
	}
	for _, l := range w.lines[:8] {
		if !strings.HasPrefix(l, "progress: run ") || !strings.HasSuffix(l, " step 1/1 | elapsed 0s | remaining 0s | \n") {
			t.Errorf("write %q, want a progress line", l)
		}
	}
	if l := w.lines[8]; l != "cache: computed k in 0s\n" {
		t.Errorf("write %q, want the computed line", l)
	}
}

// writes keeps each Write apart; it is not safe for concurrent use, so a race shows where the store does not
// serialize its lines.
type writes struct{ lines []string }

func (w *writes) Write(p []byte) (int, error) {
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
