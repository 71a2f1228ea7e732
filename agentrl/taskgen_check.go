package agentrl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// TaskCheck is the static report of a task generator (issue #41): how far a policy gets without reading where the
// bug is, how long the tasks are, and which of the chapter's invariants fail. CheckTasks computes it in well under
// a second; nothing is trained but two small logistic regressions.
type TaskCheck struct {
	Gen TaskGen
	// BlindHeldout and BlindTrain are the blind ceilings: the best single op's hidden pass fraction (BlindPass).
	BlindHeldout, BlindTrain float64
	// BoW and Bigram are the held-out accuracies of picking the op with a multinomial logistic regression on the
	// source's word counts (BoW) or its word and adjacent-pair counts (Bigram), trained on renamed training sources
	// (CheckOptions.Renamings renamings of each) and tested on renamed held-out sources. Chance is 0.2.
	BoW, Bigram float64
	// Memorized is the fraction of training tasks whose issue wording (the issue with its identifiers blanked)
	// determines the op by majority: the sum over wordings of the count of the wording's most common op, over 20.
	// 0.2 is the floor when every wording meets every op equally often.
	Memorized float64
	// Forms is the mean number of forms per task (TaskGen.RedrawForms; 1 without).
	Forms float64
	// Wordings is the number of distinct training issue wordings.
	Wordings int
	// HeldoutCopies is the number of held-out tasks whose source is a training task's up to its identifiers (the
	// same program written the same way: only the visible and hidden tests can differ).
	HeldoutCopies int
	// Misses of WrongOps: wrong-op repairs (every task of "all" x every other op) that pass all visible tests.
	Misses, WrongOps int
	// MeanTokens and MaxTokens are the source's length in tokens of BuildTokenizer (the read observation,
	// CompactSource, with <nl> between lines) over the tasks of "all"; MeanEpisode is the mean length of the
	// scripted four-call episode <bos> issue, read, edit OP, test, submit with their observations (ObsEcho).
	MeanTokens  float64
	MaxTokens   int
	MeanEpisode float64
	// InVocab: every word of every task, renamed task and observation of the scripted episodes (also after every
	// wrong edit) is in the vocabulary of BuildTokenizer over the generator's "all" tasks. NewWords lists the words
	// that vocabulary has beyond today's (BuildTokenizer(MakeTasks("all"))); none means the same token ids.
	InVocab  bool
	NewWords []string
	// Violations lists every chapter invariant that fails (empty: all hold).
	Violations []string
}

// OK reports whether every invariant holds.
func (c TaskCheck) OK() bool { return len(c.Violations) == 0 }

// CheckOptions tunes CheckTasks; zero values take the defaults.
type CheckOptions struct {
	Renamings  int    // renamings of each task for the probes (default 50)
	Seed       uint64 // seed of the renamings (default 1)
	SkipProbes bool   // leave BoW and Bigram at 0 (the invariants alone take milliseconds)
}

// CheckTasks builds the tasks of g and checks them (see TaskCheck).
func CheckTasks(g TaskGen, opt CheckOptions) (TaskCheck, error) {
	if opt.Renamings <= 0 {
		opt.Renamings = 50
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	c := TaskCheck{Gen: g}
	train, err := g.Make(SplitTrain)
	if err != nil {
		return c, err
	}
	heldout, err := g.Make(SplitHeldout)
	if err != nil {
		return c, err
	}
	all := append(append([]Task(nil), train...), heldout...)
	bad := func(format string, args ...any) { c.Violations = append(c.Violations, fmt.Sprintf(format, args...)) }

	// Balance, issue shape, and what the tests decide.
	for _, s := range []struct {
		name  string
		tasks []Task
		n     int
	}{{SplitTrain, train, numTrain}, {SplitHeldout, heldout, numHeldout}} {
		if len(s.tasks) != s.n {
			bad("%s: %d tasks, want %d", s.name, len(s.tasks), s.n)
		}
		count := map[string]int{}
		for _, t := range s.tasks {
			count[t.Op]++
		}
		for _, op := range repairOps {
			if count[op] != s.n/len(repairOps) {
				bad("%s: %d tasks for %s, want %d", s.name, count[op], op, s.n/len(repairOps))
			}
		}
	}
	rng := NewRNG(opt.Seed)
	// Every form of a task (TaskGen.RedrawForms) is checked as the task is; the visible misses count the tasks.
	type written struct {
		Task
		form bool // another form of a task of all
	}
	var writings []written
	for _, t := range all {
		writings = append(writings, written{Task: t})
		for _, f := range t.Forms {
			if f != t.Source {
				v := t
				v.Source, v.Forms = f, nil
				writings = append(writings, written{Task: v, form: true})
			}
		}
	}
	for _, w := range writings {
		t, form := w.Task, w.form
		if strings.Contains(t.Issue, "\n") {
			bad("%s: issue has a newline", t.Name)
		}
		for _, op := range repairOps {
			if strings.Contains(t.Issue, op) || strings.Contains(t.Source, op) {
				bad("%s: op %s named in the task text", t.Name, op)
			}
		}
		if Passes(t.Source, t.Hidden) == len(t.Hidden) {
			bad("%s: the buggy source passes the hidden tests", t.Name)
		}
		for _, op := range repairOps {
			src, err := ApplyOp(t.Source, op)
			if err != nil {
				bad("%s: %v", t.Name, err)
				continue
			}
			hidden := Passes(src, t.Hidden) == len(t.Hidden)
			if hidden != (op == t.Op) {
				bad("%s (%s): after %s hidden pass = %v", t.Name, t.Op, op, hidden)
			}
			if op != t.Op {
				if !form {
					c.WrongOps++
				}
				if Passes(src, t.Visible) == len(t.Visible) {
					if !form {
						c.Misses++
					}
					if g.StrictVisible {
						bad("%s (%s): %s passes the visible tests", t.Name, t.Op, op)
					}
				}
			}
		}
		for _, src := range []string{t.Source, CompactSource(t.Source), RandomizeNames(t, rng).Source, SingleTurn(t).Issue} {
			if op, err := InferOp(src); err != nil || op != t.Op {
				bad("%s: InferOp = %q, %v; want %s", t.Name, op, err, t.Op)
			}
		}
	}

	// Blind ceilings.
	for _, s := range []struct {
		tasks []Task
		out   *float64
	}{{heldout, &c.BlindHeldout}, {train, &c.BlindTrain}} {
		for _, op := range repairOps {
			p, err := BlindPass(s.tasks, op)
			if err != nil {
				return c, err
			}
			*s.out = max(*s.out, p)
		}
	}
	if c.BlindHeldout != 0.2 || c.BlindTrain != 0.2 {
		bad("blind ceiling %.3f held-out, %.3f train; want 0.200", c.BlindHeldout, c.BlindTrain)
	}

	// Probes and memorization.
	if !opt.SkipProbes {
		c.BoW = ProbeAccuracy(train, heldout, BagOfWords, opt.Renamings, NewRNG(opt.Seed+1))
		c.Bigram = ProbeAccuracy(train, heldout, Bigrams, opt.Renamings, NewRNG(opt.Seed+2))
	}
	c.Memorized, c.Wordings = IssueMemorization(train)
	c.Forms = float64(len(writings)) / float64(len(all))
	trainShapes := map[string]bool{}
	for _, t := range train {
		trainShapes[sourceShape(t.Source)] = true
	}
	for _, t := range heldout {
		if trainShapes[sourceShape(t.Source)] {
			c.HeldoutCopies++
		}
	}

	// Lengths and vocabulary.
	tok := BuildTokenizer(all)
	today, err := MakeTasks(SplitAll)
	if err != nil {
		return c, err
	}
	todayTok := BuildTokenizer(today)
	for _, w := range tok.Itos {
		if _, ok := todayTok.Stoi[w]; !ok {
			c.NewWords = append(c.NewWords, w)
		}
	}
	c.InVocab = true
	unk := func(text string) {
		if c.InVocab && slices.Contains(tok.Encode(text), tok.UnkID) {
			c.InVocab = false
			bad("out-of-vocabulary word in %q", text)
		}
	}
	episodes := 0
	for _, t := range all {
		n := len(tok.Encode(CompactSource(t.Source)))
		c.MeanTokens += float64(n) / float64(len(all))
		c.MaxTokens = max(c.MaxTokens, n)
		for _, v := range []Task{t, RandomizeNames(t, rng), SingleTurn(t)} {
			unk(v.Issue)
			unk(v.Source)
		}
		for _, first := range repairOps {
			env, err := NewEditBudgetEnv(10, nil, 2)
			if err != nil {
				return c, err
			}
			text := []string{TokBos, env.Reset(t)}
			calls := [][]string{{ToolRead}, {ToolEdit, first}, {ToolTest}, {ToolSubmit}}
			if first != t.Op { // a wrong edit, then the right one: the observations after a second bug
				calls = [][]string{{ToolRead}, {ToolEdit, first}, {ToolTest}, {ToolRead}, {ToolEdit, t.Op}, {ToolTest}, {ToolEdit, t.Op}, {ToolSubmit}}
			}
			for _, call := range calls {
				obs, _, _, _ := env.Step(CallText(call[0], call[1:]...))
				text = append(text, CallText(call[0], call[1:]...), TokObs, obs, TokObsEnd)
			}
			joined := strings.Join(text, " ")
			unk(joined)
			if first == t.Op {
				c.MeanEpisode += float64(len(tok.Encode(joined)))
				episodes++
			}
		}
	}
	c.MeanEpisode /= float64(episodes)
	return c, nil
}

// IssueMemorization is TaskCheck.Memorized and the number of distinct wordings of the tasks' issues.
func IssueMemorization(tasks []Task) (float64, int) {
	byWording := map[string]map[string]int{}
	for _, t := range tasks {
		ids := map[string]bool{}
		for _, id := range identifiers(t.Source) {
			ids[id] = true
		}
		words := strings.Fields(t.Issue)
		for i, w := range words {
			if ids[w] {
				words[i] = "_"
			}
		}
		w := strings.Join(words, " ")
		if byWording[w] == nil {
			byWording[w] = map[string]int{}
		}
		byWording[w][t.Op]++
	}
	top := 0
	for _, ops := range byWording {
		best := 0
		for _, n := range ops {
			best = max(best, n)
		}
		top += best
	}
	return float64(top) / float64(len(tasks)), len(byWording)
}

// sourceShape is a source with each identifier replaced by its rank of first appearance: equal for two sources that
// differ only in their names.
func sourceShape(source string) string {
	rank := map[string]string{}
	for i, id := range identifiers(source) {
		rank[id] = fmt.Sprintf("$%d", i)
	}
	words := strings.Fields(strings.ReplaceAll(source, "\n", " "+newlineSplit+" "))
	for i, w := range words {
		if r, ok := rank[w]; ok {
			words[i] = r
		}
	}
	return strings.Join(words, " ")
}

// sourceWords is the token sequence of a source as the read observation shows it (<nl> between lines).
func sourceWords(source string) []string {
	return strings.Fields(strings.ReplaceAll(CompactSource(source), "\n", newlineSplit))
}

// BagOfWords is the feature map of the BoW probe: each word.
func BagOfWords(words []string) []string { return words }

// Bigrams is the feature map of the bigram probe: each word and each adjacent pair (with the sequence's ends).
func Bigrams(words []string) []string {
	out := append([]string(nil), words...)
	prev := "^"
	for _, w := range append(append([]string(nil), words...), "$") {
		out = append(out, prev+" "+w)
		prev = w
	}
	return out
}

// ProbeAccuracy trains a multinomial logistic regression (softmax over the ops, L2-regularized, full-batch gradient
// descent on feature counts) to name the op from features of renamed training sources, renamings renamings of
// each, and returns its accuracy on renamings renamings of each test task. Features unseen in training are
// dropped.
func ProbeAccuracy(train, test []Task, features func([]string) []string, renamings int, rng *rand.Rand) float64 {
	index := map[string]int{}
	type sample struct {
		x map[int]float64
		y int
	}
	encode := func(t Task, grow bool) sample {
		s := sample{x: map[int]float64{}, y: slices.Index(repairOps[:], t.Op)}
		for _, f := range features(sourceWords(t.Source)) {
			i, ok := index[f]
			if !ok {
				if !grow {
					continue
				}
				i = len(index)
				index[f] = i
			}
			s.x[i]++
		}
		return s
	}
	var tr, te []sample
	for r := 0; r < renamings; r++ {
		for _, t := range train {
			tr = append(tr, encode(RandomizeNames(t, rng), true))
		}
	}
	for r := 0; r < renamings; r++ {
		for _, t := range test {
			te = append(te, encode(RandomizeNames(t, rng), false))
		}
	}
	// Sorted sparse rows, so the sums run in a fixed order.
	type row struct {
		idx []int
		val []float64
		y   int
	}
	toRows := func(ss []sample) []row {
		out := make([]row, len(ss))
		for n, s := range ss {
			keys := make([]int, 0, len(s.x))
			for k := range s.x {
				keys = append(keys, k)
			}
			sort.Ints(keys)
			r := row{idx: keys, y: s.y}
			for _, k := range keys {
				r.val = append(r.val, s.x[k])
			}
			out[n] = r
		}
		return out
	}
	trRows, teRows := toRows(tr), toRows(te)
	const classes = len(repairOps)
	nf := len(index)
	w := make([]float64, (nf+1)*classes) // feature-major, the last row the bias
	grad := make([]float64, len(w))
	logits := func(r row) [classes]float64 {
		var z [classes]float64
		for k := range z {
			z[k] = w[nf*classes+k]
		}
		for j, i := range r.idx {
			for k := range z {
				z[k] += r.val[j] * w[i*classes+k]
			}
		}
		return z
	}
	const steps, lr, l2 = 400, 0.5, 1e-4
	for step := 0; step < steps; step++ {
		clear(grad)
		for _, r := range trRows {
			z := logits(r)
			m := slices.Max(z[:])
			var sum float64
			for k := range z {
				z[k] = math.Exp(z[k] - m)
				sum += z[k]
			}
			for k := range z {
				p := z[k] / sum
				if k == r.y {
					p--
				}
				for j, i := range r.idx {
					grad[i*classes+k] += p * r.val[j]
				}
				grad[nf*classes+k] += p
			}
		}
		for i := range w {
			w[i] -= lr * (grad[i]/float64(len(trRows)) + l2*w[i])
		}
	}
	correct := 0
	for _, r := range teRows {
		z := logits(r)
		best := 0
		for k := range z {
			if z[k] > z[best] {
				best = k
			}
		}
		if best == r.y {
			correct++
		}
	}
	return float64(correct) / float64(len(teRows))
}
