package agentrl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// TaskGen is the BugFix task generator with the knobs of issue #41 (tasks as hard as the book's). Its zero value is
// MakeTasks's generator, bit for bit; each knob removes one shortcut that lets a policy pick the op without reading
// where the bug is. Whatever the knobs, Make keeps what the chapter needs: 20 train and 10 held-out tasks, 4 and 2
// per op, every wrong op failing a hidden test (so the best single blind op passes exactly 0.200 of either split), the
// op readable off the source by InferOp, an issue without newline that never names the bug, identifiers that
// RandomizeNames redraws, and no word outside the vocabulary of today's tasks (see CheckTasks).
type TaskGen struct {
	// Distractors (0 to 3) is how many of three correct sites of each program are written in an alternative
	// form that carries a bug's tokens, chosen per task at random: the condition as "x >= L + 1", "x - 1 >= L"
	// (above L) or "x <= L - 1", "x + 1 <= L" (below L), which puts >=, <=, + 1 and - 1 in correct code; the loop
	// as "for x in xs [ 0 : ] :", which puts the slice in correct code; the result as "return 0 + acc", which
	// puts "return 0" in correct code. The bug of a task may fall on a site in its alternative form: then the
	// comparison bug is "x > L + 1" (a strict comparison with an adjusted bound; InferOp reads a comparison bug
	// as strictness equal to adjustment), the off-by-one bug "[ 1 : ]" and the return bug "return 0".
	Distractors int
	// HardShare (0, 0.5 or 1) is the share of tasks, per op and the same in both splits, whose program has a
	// second, inner guard: "f should sum items above 2 below 7" checks both bounds (the comparison bug stays on
	// the outer guard; with Distractors > 0 the inner guard takes an alternative correct form half the time).
	HardShare float64
	// SharedIssues gives the five tasks of each block of five (one per op) the same wording (kind, direction and
	// limits), so no wording predicts its op; the kind and the direction still meet every op evenly.
	SharedIssues bool
	// SeenIssues (with SharedIssues) gives each held-out block the wording of a training block (the second and the
	// third), so every held-out issue is worded as training issues are and only the function's name is new: the
	// held-out split then meets no wording the training split lacks. A held-out task differs from the training task
	// of its wording and op in its names, its distractor forms and its tests (TaskCheck.HeldoutCopies counts those
	// that differ in nothing but names).
	SeenIssues bool
	// RedrawForms (with Distractors) gives every task as Forms each choice of its distractor sites that its tests
	// grade alike, so that RandomizeNames writes the program in another of them each episode, as it draws other
	// names: a policy cannot tell a task by where its distractors are, on either split.
	RedrawForms bool
	// StrictVisible re-draws the visible tests (still three) so that every wrong op fails at least one of them.
	StrictVisible bool
	// Seed seeds the names, the limits and the tests; 0 is MakeTasks's seed (12).
	Seed uint64
}

// String is the generator's knobs in the flag syntax of cmd/taskcheck, "default" for the zero value.
func (g TaskGen) String() string {
	var parts []string
	if g.Distractors != 0 {
		parts = append(parts, fmt.Sprintf("d=%d", g.Distractors))
	}
	if g.HardShare != 0 {
		parts = append(parts, fmt.Sprintf("hard=%g", g.HardShare))
	}
	if g.SharedIssues {
		parts = append(parts, "shared")
	}
	if g.SeenIssues {
		parts = append(parts, "seen")
	}
	if g.RedrawForms {
		parts = append(parts, "redraw")
	}
	if g.StrictVisible {
		parts = append(parts, "strict")
	}
	if g.Seed != 0 {
		parts = append(parts, fmt.Sprintf("seed=%d", g.Seed))
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ",")
}

// Validate returns an error for a knob outside its range.
func (g TaskGen) Validate() error {
	if g.Distractors < 0 || g.Distractors > numDistractorSites {
		return fmt.Errorf("task gen: distractors %d, want 0 to %d", g.Distractors, numDistractorSites)
	}
	// The hard tasks are a whole number per op in both splits (4 and 2 tasks per op).
	if h := g.HardShare; h < 0 || h > 1 || 2*h != math.Round(2*h) {
		return fmt.Errorf("task gen: hard share %g, want 0, 0.5 or 1", h)
	}
	if g.RedrawForms && g.Distractors == 0 {
		return fmt.Errorf("task gen: redrawn forms need distractors (the forms are their choices of sites)")
	}
	if g.SeenIssues && !g.SharedIssues {
		return fmt.Errorf("task gen: seen issues need shared issues (a held-out block takes a training block's wording)")
	}
	return nil
}

// Make is MakeTasks for this generator: the tasks of a split ("train", "heldout" or "all") in a stable order.
func (g TaskGen) Make(split string) ([]Task, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	var lo, hi int
	switch split {
	case SplitTrain:
		lo, hi = 0, numTrain
	case SplitHeldout:
		lo, hi = numTrain, numTrain+numHeldout
	case SplitAll:
		lo, hi = 0, numTrain+numHeldout
	default:
		return nil, fmt.Errorf("make tasks: unknown split %q (want %q, %q or %q)", split, SplitTrain, SplitHeldout, SplitAll)
	}
	tasks := make([]Task, 0, hi-lo)
	for i := lo; i < hi; i++ {
		t, err := g.task(i)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// The sites a distractor can take (the init and the update have none: "acc = 0" and "acc = acc + e" have no
// alternative form that keeps the sites of findSites).
const (
	distractCond = iota
	distractLoop
	distractReturn
	numDistractorSites
)

// distractorSites marks the d sites (of numDistractorSites) written in an alternative form for the task with
// rotation r (its op plus its block's index in its split): with one or two sites the site left alone (or taken) turns
// with r, so an op's tasks meet every choice of sites, in both splits, and no choice of sites goes with one op.
func distractorSites(d, r int) [numDistractorSites]int {
	var alt [numDistractorSites]int
	for s := range alt {
		if d == numDistractorSites || d > 0 && (s == r%numDistractorSites) == (d == 1) {
			alt[s] = 1
		}
	}
	return alt
}

// mixSeed is SplitMix64's finalizer: it spreads seeds that differ in a few bits (a task's index) over all 64, so
// the knobs' random streams of neighbouring tasks are unrelated (rand.PCG seeded with neighbouring values draws
// related first numbers).
func mixSeed(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// guardText is the condition "x > L" (above) or "x < L" (below) in form 0, or one of its two correct alternative
// forms: 1 is "x >= L + 1" / "x <= L - 1", 2 is "x - 1 >= L" / "x + 1 <= L".
func guardText(x string, above bool, lim, form int) string {
	cmp, ncmp, adj, inv := ">", ">=", "+", "-"
	if !above {
		cmp, ncmp, adj, inv = "<", "<=", "-", "+"
	}
	switch form {
	case 1:
		return fmt.Sprintf("%s %s %d %s 1", x, ncmp, lim, adj)
	case 2:
		return fmt.Sprintf("%s %s 1 %s %d", x, inv, ncmp, lim)
	}
	return fmt.Sprintf("%s %s %d", x, cmp, lim)
}

// task builds the task with global index i (train 0..19, then heldout 20..29). With no knob set it is the
// generator of the book's make_tasks; the knobs draw from a second random stream, so they leave the names, the
// limits and the tests of the first one as they are.
func (g TaskGen) task(i int) (Task, error) {
	seed := g.Seed
	if seed == 0 {
		seed = tasksSeed
	}
	rng := NewRNG(seed*1000 + uint64(i))
	krng := NewRNG(mixSeed(seed*1000 + uint64(i) + 1<<40))
	// The op, the kind and the direction are spread so that neither the kind nor the direction (both visible in
	// the issue) predicts the op: over the train split each op meets every kind once and each direction twice.
	var name string
	var op, block, inSplit, perOp int // inSplit: the block's index in its split; perOp: tasks per op in the split
	if i < numTrain {
		name, op, block, inSplit, perOp = fmt.Sprintf("train/%02d", i), (i+i/5)%len(repairOps), i/5, i/5, numTrain/len(repairOps)
	} else {
		j := i - numTrain
		name, op, block, inSplit, perOp = fmt.Sprintf("heldout/%02d", j), j%len(repairOps), 2*(j/5)+1, j/5, numHeldout/len(repairOps)
	}
	k := taskKinds[(op+block)%len(taskKinds)]
	above := (op+block/2)%2 == 0
	if i >= numTrain {
		above = (op+block/2)%2 == 1
	}
	limitAt := i
	if g.SharedIssues {
		// One wording per block of five (the block holds every op once): the kind follows the block and the
		// direction alternates, so over the train split each op still meets every kind once and each direction
		// twice.
		k, above, limitAt = taskKinds[block%len(taskKinds)], inSplit%2 == 0, i-i%5
		if g.SeenIssues && i >= numTrain {
			// The training block whose wording this held-out block takes: its kind, direction and limit. Hard
			// tasks stay hard: with a hard share of 0.5 the first held-out block and the first two training
			// blocks are the hard ones.
			w := 1 + inSplit
			k, above, limitAt = taskKinds[w%len(taskKinds)], w%2 == 0, 5*w
		}
	}
	limit, dir := 1+(limitAt*5)%6, "above"
	if !above {
		limit, dir = limit+2, "below"
	}
	perm := rng.Perm(len(namePool))
	fn, list, x, acc := namePool[perm[0]], namePool[perm[1]], namePool[perm[2]], namePool[perm[3]]
	update := strings.ReplaceAll(k.update, "X", x)

	// Knobs: the distractor sites, the inner guard of a hard task. The shared-issue knob must give every task of a
	// block the same inner bound, so it is drawn from the block's stream.
	alt := distractorSites(g.Distractors, op+inSplit)
	condForm := 0
	if alt[distractCond] == 1 {
		condForm = 1 + krng.IntN(2)
	}
	hard := float64(inSplit) < g.HardShare*float64(perOp)
	inner, issueTail := "", ""
	if hard {
		brng := krng
		if g.SharedIssues {
			brng = NewRNG(mixSeed(seed*1000 + uint64(limitAt) + 2<<40)) // the wording's block (limitAt is its first task)
		}
		var other int
		if above {
			other = min(limit+3+brng.IntN(3), 9)
		} else {
			other = max(limit-3-brng.IntN(3), 0)
		}
		innerForm := 0
		if g.Distractors > 0 && krng.IntN(2) == 1 {
			innerForm = 1 + krng.IntN(2)
		}
		odir := "below"
		if !above {
			odir = "above"
		}
		inner, issueTail = guardText(x, !above, other, innerForm), fmt.Sprintf(" %s %d", odir, other)
	}
	// program writes the correct program with the distractor sites alt, the guard in condForm.
	program := func(alt [numDistractorSites]int, condForm int) string {
		loop := fmt.Sprintf("  for %s in %s :", x, list)
		if alt[distractLoop] == 1 {
			loop = fmt.Sprintf("  for %s in %s [ 0 : ] :", x, list)
		}
		ret := fmt.Sprintf("  return %s", acc)
		if alt[distractReturn] == 1 {
			ret = fmt.Sprintf("  return 0 + %s", acc)
		}
		lines := []string{
			fmt.Sprintf("def %s ( %s ) :", fn, list),
			fmt.Sprintf("  %s = 0", acc),
			loop,
			fmt.Sprintf("    if %s :", guardText(x, above, limit, condForm)),
		}
		body := fmt.Sprintf("      %s = %s + %s", acc, acc, update)
		if inner != "" {
			lines = append(lines, fmt.Sprintf("      if %s :", inner))
			body = "  " + body
		}
		return strings.Join(append(lines, body, ret), "\n")
	}
	correct := program(alt, condForm)
	buggy, err := ApplyOp(correct, repairOps[op])
	if err != nil {
		return Task{}, fmt.Errorf("task %s: %v", name, err) // programmer error: every generated program has every site
	}
	first := limit + 1
	if !above {
		first = limit - 1
	}
	inputs := [][]int{{limit}, {first, limit, 2}}
	for len(inputs) < 9 {
		inputs = append(inputs, randomInput(rng))
	}
	cases := make([]Case, len(inputs))
	for c, xs := range inputs {
		want, err := RunProgram(correct, xs)
		if err != nil {
			return Task{}, fmt.Errorf("task %s: %v", name, err)
		}
		cases[c] = Case{Input: xs, Want: want}
	}
	// The hidden tests must fail every wrong op (today's tasks: they do, and stay as they are; a hard task's
	// narrower range can need other random inputs than the four drawn).
	hidden, err := coverCases(buggy, repairOps[op], correct, cases[:2], cases[2:6], krng)
	if err != nil {
		return Task{}, fmt.Errorf("task %s: hidden: %v", name, err)
	}
	hidden = append(cases[:2:2], hidden...)
	visible := cases[6:]
	if g.StrictVisible {
		if visible, err = coverCases(buggy, repairOps[op], correct, nil, visible, krng); err != nil {
			return Task{}, fmt.Errorf("task %s: visible: %v", name, err)
		}
	}
	task := Task{
		Name:    name,
		Issue:   fmt.Sprintf("%s should %s %s %s %d%s", fn, k.verb, k.noun, dir, limit, issueTail),
		Source:  buggy,
		Op:      repairOps[op],
		Kind:    k.kind,
		Hidden:  hidden,
		Visible: visible,
	}
	if g.RedrawForms { // Validate: with distractors
		if task.Forms, err = forms(task, g.Distractors, program); err != nil {
			return Task{}, err
		}
	}
	return task, nil
}

// forms is Task.Forms for RedrawForms: task's program with each choice of d distractor sites (and both alternative
// guards where the guard is one) that keeps what the task's tests decide: the bug fails a hidden test, its op
// repairs it, every other op fails a hidden test and, where the task's visible tests catch every wrong op, they
// still do. task.Source is one of them.
func forms(task Task, d int, program func(alt [numDistractorSites]int, condForm int) string) ([]string, error) {
	catchesAll := func(src string, cases []Case) bool {
		for _, o := range repairOps {
			if o == task.Op {
				continue
			}
			wrong, err := ApplyOp(src, o)
			if err != nil || Passes(wrong, cases) == len(cases) {
				return false
			}
		}
		return true
	}
	strict := catchesAll(task.Source, task.Visible)
	var out []string
	for mask := range 1 << numDistractorSites {
		var alt [numDistractorSites]int
		n := 0
		for s := range alt {
			alt[s] = mask >> s & 1
			n += alt[s]
		}
		if n != d {
			continue
		}
		guards := []int{0}
		if alt[distractCond] == 1 {
			guards = []int{1, 2}
		}
		for _, cf := range guards {
			buggy, err := ApplyOp(program(alt, cf), task.Op)
			if err != nil {
				return nil, err
			}
			fixed, err := ApplyOp(buggy, task.Op)
			if err != nil {
				return nil, err
			}
			if Passes(buggy, task.Hidden) < len(task.Hidden) && Passes(fixed, task.Hidden) == len(task.Hidden) &&
				catchesAll(buggy, task.Hidden) && (!strict || catchesAll(buggy, task.Visible)) {
				out = append(out, buggy)
			}
		}
	}
	if !slices.Contains(out, task.Source) {
		return nil, fmt.Errorf("task %s: its own source is not among its forms", task.Name)
	}
	return out, nil
}

// randomInput is one random test input: 1 to 5 integers in 0..9.
func randomInput(rng *rand.Rand) []int {
	xs := make([]int, 1+rng.IntN(5))
	for i := range xs {
		xs[i] = rng.IntN(10)
	}
	return xs
}

// coverCases returns start, or when some wrong op (every op but op, applied to buggy) passes all of fixed and start,
// as many cases as start has such that each wrong op fails at least one of fixed and the result: a greedy cover
// over start and fresh random inputs, each pick the case that catches most uncaught wrong ops (start's cases first on
// ties).
func coverCases(buggy, op, correct string, fixed, start []Case, rng *rand.Rand) ([]Case, error) {
	var wrong []string
	for _, o := range repairOps {
		if o != op {
			src, err := ApplyOp(buggy, o)
			if err != nil {
				return nil, err
			}
			wrong = append(wrong, src)
		}
	}
	catches := func(c Case, src string) bool {
		got, err := RunProgram(src, c.Input)
		return err != nil || got != c.Want
	}
	caught := make([]bool, len(wrong))
	mark := func(c Case) {
		for w, src := range wrong {
			caught[w] = caught[w] || catches(c, src)
		}
	}
	allCaught := func() bool { return !slices.Contains(caught, false) }
	for _, c := range append(append([]Case(nil), fixed...), start...) {
		mark(c)
	}
	if allCaught() {
		return start, nil
	}
	clear(caught)
	for _, c := range fixed {
		mark(c)
	}
	cands := append([]Case(nil), start...)
	for len(cands) < len(start)+64 {
		xs := randomInput(rng)
		want, err := RunProgram(correct, xs)
		if err != nil {
			return nil, err
		}
		cands = append(cands, Case{Input: xs, Want: want})
	}
	var out []Case
	for len(out) < len(start) {
		best, bestN := -1, -1
		for ci, c := range cands {
			n := 0
			for w, src := range wrong {
				if !caught[w] && catches(c, src) {
					n++
				}
			}
			if n > bestN {
				best, bestN = ci, n
			}
		}
		out = append(out, cands[best])
		mark(cands[best])
		cands = append(cands[:best:best], cands[best+1:]...)
	}
	if !allCaught() {
		return nil, fmt.Errorf("no %d more tests catch every wrong op", len(start))
	}
	return out, nil
}
