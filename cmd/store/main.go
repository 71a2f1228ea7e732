// Command store lists the results in the result store and removes them by age or by what computed them.
//
//	go run ./cmd/store                          # every result: key, code, numerics, size, last use, current or stale
//	go run ./cmd/store -stale -prune            # remove the results the code on disk would not compute
//	go run ./cmd/store -older 720h -prune       # remove those not used for 30 days
//	go run ./cmd/store -name train_ -code 1a2b  # list the runs computed by the code of digest 1a2b…
//
// A key holds the code that computed a result, so every edit of the library leaves the results of the older code
// behind: -stale finds them, by computing the digest of the code each result's key holds as the disk has it now.
// The store is $AGENTRL_CACHE, else the user's cache directory (~/.cache/agentrl on Linux), or -dir.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentrl-go/agentrl/codekey"
	"github.com/agentrl-go/agentrl/store"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "store:", err)
		os.Exit(2)
	}
}

// filter selects entries; the zero filter selects all.
type filter struct {
	name, code, numerics string
	older                time.Duration
	stale                bool
}

func (f filter) any() bool {
	return f.name != "" || f.code != "" || f.numerics != "" || f.older > 0 || f.stale
}

func (f filter) selects(e store.Entry, stale bool, now time.Time) bool {
	return strings.HasPrefix(e.Name, f.name) && strings.HasPrefix(e.Code, f.code) &&
		(f.numerics == "" || strings.Contains(e.Numerics, f.numerics) || strings.HasPrefix(digest(e.Numerics), f.numerics)) &&
		(f.older == 0 || now.Sub(e.Used) > f.older) && (!f.stale || stale)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("store", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f filter
	dir := fs.String("dir", "", "the store's directory (default: $"+store.Env+", else the user's cache directory)")
	prune := fs.Bool("prune", false, "remove the results the filters select (at least one filter is needed)")
	fs.StringVar(&f.name, "name", "", "results whose name starts with this (rl_base, train_grpo, held_out, 12.1/…)")
	fs.StringVar(&f.code, "code", "", "results computed by the code whose digest starts with this")
	fs.StringVar(&f.numerics, "numerics", "", "results whose numerics contain this text or whose digest starts with it")
	fs.DurationVar(&f.older, "older", 0, "results last used longer ago than this (720h: 30 days)")
	fs.BoolVar(&f.stale, "stale", false, "results that the code on disk would not compute (their code digest differs)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: go run ./cmd/store [flags]\n\nLists the results in the result store, or removes those the filters select (-prune).\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every setting is a flag (-h lists them)", fs.Args())
	}
	if *prune && !f.any() {
		return errors.New("-prune removes what the filters select: name at least one (-stale, -older, -name, -code, -numerics)")
	}
	s, err := open(*dir)
	if err != nil {
		return err
	}
	entries, err := s.Entries()
	if err != nil {
		return err
	}
	return report(s, entries, f, *prune, stdout)
}

func open(dir string) (*store.Store, error) {
	if dir != "" {
		return store.Open(dir)
	}
	return store.Default()
}

// report lists the entries f selects, removing them when prune is set, and sums them up.
func report(s *store.Store, entries []store.Entry, f filter, prune bool, out io.Writer) error {
	now := time.Now()
	current := map[string]string{} // a package set → the digest of its code on disk now
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tCODE\tNUMERICS\tSIZE\tLAST USE\tCODE ON DISK")
	var n int
	var bytes int64
	for _, e := range entries {
		state := stateOf(e, current)
		if !f.selects(e, state == "stale", now) {
			continue
		}
		if prune {
			if err := s.Remove(e.Key); err != nil {
				return err
			}
		}
		n++
		bytes += e.Size
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Key, short(e.Code), short(digest(e.Numerics)), size(e.Size),
			age(now.Sub(e.Used)), state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verb := "selected"
	if prune {
		verb = "removed"
	}
	fmt.Fprintf(out, "%d of %d results %s (%s) in %s\n", n, len(entries), verb, size(bytes), s.Dir())
	return nil
}

// stateOf says whether the code on disk computes e ("current"), does not ("stale"), or cannot tell.
func stateOf(e store.Entry, current map[string]string) string {
	if e.Code == "" || len(e.Packages) == 0 {
		return "unknown (stored before results were described)"
	}
	set := strings.Join(e.Packages, " ")
	d, ok := current[set]
	if !ok {
		var err error
		if d, err = codekey.Code(e.Packages); err != nil {
			d = ""
		}
		current[set] = d
	}
	if d == e.Code {
		return "current"
	}
	return "stale"
}

func digest(s string) string {
	if s == "" {
		return ""
	}
	k, _ := codekey.Of(s)
	return k
}

func short(s string) string { return s[:min(len(s), 8)] }

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}
