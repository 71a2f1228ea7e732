package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/agentrl-go/agentrl/notebooks/harness"
)

// resultKind is what the cold chapter spent computing one kind of stored result: the key's name (the text before
// its first "-": rl_base, train_rl, held_out, …), how many it computed and their total time.
type resultKind struct {
	name  string
	count int
	total time.Duration
}

// coldProfile reads the results that the executed notebooks' status blocks say were computed
// (harness.StoreActivity) and totals them by the key's name, largest total first. Time a notebook spends outside
// stored results (building and starting cell programs, unstored probes) is not in it.
func coldProfile(paths []string) ([]resultKind, error) {
	kinds := map[string]*resultKind{}
	for _, p := range paths {
		nb, err := harness.Load(p)
		if err != nil {
			return nil, err
		}
		computed, _ := harness.StoreActivity(nb)
		for _, r := range computed {
			name, _, _ := strings.Cut(r.Key, "-")
			if kinds[name] == nil {
				kinds[name] = &resultKind{name: name}
			}
			kinds[name].count++
			kinds[name].total += r.Took
		}
	}
	out := make([]resultKind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].total > out[j].total })
	return out, nil
}

// printProfile prints coldProfile's table and the share of the cold chapter (total) it accounts for.
func printProfile(w io.Writer, kinds []resultKind, total time.Duration) {
	var sum time.Duration
	for _, k := range kinds {
		sum += k.total
	}
	fmt.Fprintf(w, "cold chapter, time computing stored results by kind (%.0f%% of %.0fs):\n", 100*sum.Seconds()/total.Seconds(), total.Seconds())
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-28s %4d computed | %6.0fs | %5.1fs each\n", k.name, k.count, k.total.Seconds(),
			k.total.Seconds()/float64(k.count))
	}
}
