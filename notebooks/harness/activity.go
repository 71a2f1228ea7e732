package harness

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Computed is one result a notebook's execution computed, as its status block tells it ("cache: computed KEY in
// T", and "… but could not store it: …" for one the store could not keep).
type Computed struct {
	Key    string
	Took   time.Duration
	Stored bool
}

// StoreActivity reads the status blocks of an executed notebook (displays whose text is the result store's notices,
// see ch12.Status): the results its cells computed, in order, and how many stored results they loaded. A cell's own
// output that mentions the cache is not a status block and is not read.
func StoreActivity(nb *Notebook) (computed []Computed, loaded int) {
	statusLines(nb, func(line string) {
		if rest, ok := strings.CutPrefix(line, "cache: computed "); ok {
			if r, ok := parseComputed(rest); ok {
				computed = append(computed, r)
			}
		} else if strings.HasPrefix(line, "cache: loaded ") {
			n := 1
			fmt.Sscanf(line, "cache: loaded %d stored results", &n)
			loaded += n
		}
	})
	return computed, loaded
}

// statusLines calls f with each line of nb's displays whose text is plain (the status blocks among them).
func statusLines(nb *Notebook, f func(line string)) {
	for _, c := range nb.CodeCells() {
		for _, o := range c.Outputs {
			var text Text
			if raw, ok := o.Data["text/plain"]; !ok || json.Unmarshal(raw, &text) != nil {
				continue
			}
			for _, line := range strings.Split(string(text), "\n") {
				f(line)
			}
		}
	}
}

// parseComputed reads "KEY in T" or "KEY in T but could not store it: …".
func parseComputed(rest string) (Computed, bool) {
	key, took, ok := strings.Cut(rest, " in ")
	if !ok {
		return Computed{}, false
	}
	fields := strings.Fields(took)
	if len(fields) == 0 {
		return Computed{}, false
	}
	d, err := time.ParseDuration(fields[0])
	if err != nil {
		return Computed{}, false
	}
	return Computed{Key: key, Took: d, Stored: !strings.Contains(took, "could not")}, true
}

// LoadedKeys reads the keys of the stored results an executed notebook's status blocks say its cells loaded, where
// they name them ("cache: loaded KEY", "cache: loaded 3 stored results (A, B and 1 more)": A and B), in order.
func LoadedKeys(nb *Notebook) []string {
	var keys []string
	statusLines(nb, func(line string) {
		rest, ok := strings.CutPrefix(line, "cache: loaded ")
		if !ok {
			return
		}
		_, list, many := strings.Cut(rest, " stored results (")
		if !many {
			keys = append(keys, strings.TrimSpace(rest))
			return
		}
		list = strings.TrimSuffix(list, ")")
		if i := strings.LastIndex(list, " and "); i >= 0 {
			list = list[:i]
		}
		for _, k := range strings.Split(list, ", ") {
			keys = append(keys, strings.TrimSpace(k))
		}
	})
	return keys
}
