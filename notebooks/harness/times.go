package harness

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// TimesFile, in the chapter's folder (ignored by git), holds each notebook's wall time in the last run that executed
// notebooks (TestNotebooks, or the execute command on the chapter's), with what the result store did for each; the
// chapter's progress line estimates the time left from it.
const TimesFile = "TIMES.run.txt"

// Timing is one notebook's line in TimesFile.
type Timing struct {
	Name             string // the notebook's file name
	Wall             time.Duration
	Computed, Loaded int // results its cells computed (and stored), and stored results they loaded
}

// NewTiming returns the Timing of an executed notebook (res.Executed may be nil: nothing computed or loaded).
func NewTiming(name string, res *Result) Timing {
	x := Timing{Name: name, Wall: res.Wall}
	if res.Executed != nil {
		results, loaded := StoreActivity(res.Executed)
		for _, r := range results {
			if r.Stored {
				x.Computed++
			}
		}
		x.Loaded = loaded
	}
	return x
}

// WriteTimes writes ts to file, one notebook a line, then their sum ("all") and, when wall is not zero, the wall
// time of the whole run with jobs notebooks at once, so that CI can show how long the chapter took and whether its
// results were computed (a cold store) or loaded (a warm one).
func WriteTimes(file string, ts []Timing, wall time.Duration, jobs int) error {
	if len(ts) == 0 {
		return nil
	}
	var b strings.Builder
	var total time.Duration
	computed, loaded := 0, 0
	for _, x := range ts {
		fmt.Fprintf(&b, "%-45s %7.1f s | results computed %3d, loaded %3d\n", x.Name, x.Wall.Seconds(), x.Computed, x.Loaded)
		total += x.Wall
		computed += x.Computed
		loaded += x.Loaded
	}
	fmt.Fprintf(&b, "%-45s %7.1f s | results computed %3d, loaded %3d\n", "all", total.Seconds(), computed, loaded)
	if wall > 0 {
		fmt.Fprintf(&b, "%-45s %7.1f s | %d at once\n", "wall", wall.Seconds(), jobs)
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

// ReadTimes reads the notebooks' wall times from a file WriteTimes wrote, by notebook file name. A missing or
// unreadable file is no times.
func ReadTimes(file string) map[string]time.Duration {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	times := map[string]time.Duration{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || !strings.HasSuffix(fields[0], ".ipynb") || fields[2] != "s" {
			continue
		}
		if s, err := strconv.ParseFloat(fields[1], 64); err == nil && s >= 0 {
			times[fields[0]] = time.Duration(s * float64(time.Second))
		}
	}
	return times
}
