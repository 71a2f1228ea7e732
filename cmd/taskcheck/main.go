// Command taskcheck prints the static checks of the BugFix task generator (issue #41, tasks as hard as the book's):
// one row per generator setting with the blind ceilings, the bag-of-words and bigram probes, issue memorization,
// visible-test misses, source and episode lengths in tokens, the vocabulary, and whether every chapter invariant
// holds. Nothing is trained but the probes; a row takes well under a second.
//
//	go run ./cmd/taskcheck                          # today's generator (MakeTasks)
//	go run ./cmd/taskcheck -d 2 -hard 0.5 -shared -strict
//	go run ./cmd/taskcheck -search                  # a small grid of knob settings, today's first
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/agentrl-go/agentrl/agentrl"
)

func main() {
	var g agentrl.TaskGen
	flag.IntVar(&g.Distractors, "d", 0, "distractor sites per task (0 to 3)")
	flag.Float64Var(&g.HardShare, "hard", 0, "share of hard (two-guard) tasks: 0, 0.5 or 1")
	flag.BoolVar(&g.SharedIssues, "shared", false, "issue wordings shared by the five ops of a block")
	flag.BoolVar(&g.SeenIssues, "seen", false, "held-out blocks take training blocks' wordings (with -shared)")
	flag.BoolVar(&g.RedrawForms, "redraw", false, "every episode writes the task in another choice of its distractor sites (with -d)")
	flag.BoolVar(&g.StrictVisible, "strict", false, "visible tests that catch every wrong op")
	flag.Uint64Var(&g.Seed, "seed", 0, "generator seed (0: MakeTasks's)")
	renamings := flag.Int("renamings", 50, "renamings of each task for the probes")
	search := flag.Bool("search", false, "check a small grid of knob settings instead of one")
	verbose := flag.Bool("v", false, "list the violations and the new vocabulary words under each row")
	flag.Parse()

	gens := []agentrl.TaskGen{g}
	if *search {
		gens = Grid(g.Seed)
	}
	opt := agentrl.CheckOptions{Renamings: *renamings}
	fmt.Println(header)
	failed := false
	for _, gen := range gens {
		c, err := agentrl.CheckTasks(gen, opt)
		if err != nil {
			fmt.Fprintf(os.Stderr, "taskcheck: %s: %v\n", gen, err)
			os.Exit(1)
		}
		fmt.Println(Row(c))
		if *verbose {
			for _, v := range c.Violations {
				fmt.Println("    violation:", v)
			}
			if len(c.NewWords) > 0 {
				fmt.Println("    new words:", strings.Join(c.NewWords, " "))
			}
		}
		failed = failed || !c.OK() && !*search
	}
	if failed {
		os.Exit(1)
	}
}

const header = "setting                          | blind ho  tr  | bow   bigram | memo (wordings) | copies | forms | misses  | src tok mean max | episode | vocab | ok"

// Row formats one generator's checks as a line of the table.
func Row(c agentrl.TaskCheck) string {
	vocab := "same"
	switch {
	case !c.InVocab:
		vocab = "UNK"
	case len(c.NewWords) > 0:
		vocab = fmt.Sprintf("+%d", len(c.NewWords))
	}
	ok := "yes"
	if !c.OK() {
		ok = fmt.Sprintf("NO (%d)", len(c.Violations))
	}
	return fmt.Sprintf("%-32s | %.3f %.3f   | %.3f %.3f  | %.2f (%2d)       | %2d     | %5.1f | %3d/%3d | %6.1f %3d       | %6.1f  | %-5s | %s",
		c.Gen, c.BlindHeldout, c.BlindTrain, c.BoW, c.Bigram, c.Memorized, c.Wordings, c.HeldoutCopies, c.Forms, c.Misses, c.WrongOps,
		c.MeanTokens, c.MaxTokens, c.MeanEpisode, vocab, ok)
}

// Grid is the search's settings: today's generator first, then each knob alone, then combinations (shared wordings
// with and without held-out wordings seen in training).
func Grid(seed uint64) []agentrl.TaskGen {
	out := []agentrl.TaskGen{{Seed: seed}}
	for _, d := range []int{0, 1, 2, 3} {
		for _, h := range []float64{0, 0.5, 1} {
			for _, shared := range []bool{false, true} {
				for _, strict := range []bool{false, true} {
					g := agentrl.TaskGen{Distractors: d, HardShare: h, SharedIssues: shared, StrictVisible: strict, Seed: seed}
					if g != out[0] {
						out = append(out, g)
					}
					if shared {
						g.SeenIssues = true
						out = append(out, g)
					}
				}
			}
		}
	}
	return out
}
