package agentrl

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

func TestComputeAdvantages(t *testing.T) {
	tests := []struct {
		name    string
		rewards []float32
		group   int
		want    []float64
	}{
		{"two groups", []float32{1, 0, 0, 0, 1, 1}, 3, []float64{1.1547, -0.57735, -0.57735, -1.1547, 0.57735, 0.57735}},
		{"all equal", []float32{0.5, 0.5}, 2, []float64{0, 0}},
		{"group of one", []float32{3}, 1, []float64{0}},
	}
	for _, tt := range tests {
		got := ComputeAdvantages(tt.rewards, tt.group)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: %d advantages, want %d", tt.name, len(got), len(tt.want))
		}
		for i := range got {
			if math.Abs(float64(got[i])-tt.want[i]) > 1e-4 {
				t.Errorf("%s: advantages %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

func TestTokenRewardsAndReturns(t *testing.T) {
	// Two calls (positions 1-2 and 5-6) separated by an observation.
	mask := [][]float32{{0, 1, 1, 0, 0, 1, 1, 0}}
	trajs := []Trajectory{{Info: Info{Submitted: true, HiddenPass: true}}}
	rewards := PerCallRewards(trajs, mask, 0.1)
	want := []float32{0, 0, -0.1, 0, 0, 0, 0.9, 0}
	for j := range want {
		if !approx(float64(rewards[0][j]), float64(want[j])) {
			t.Fatalf("PerCallRewards = %v, want %v", rewards[0], want)
		}
	}
	ret := ReturnsToGo(rewards, mask)
	wantRet := []float32{0, 0.8, 0.8, 0, 0, 0.9, 0.9, 0}
	for j := range wantRet {
		if !approx(float64(ret[0][j]), float64(wantRet[j])) {
			t.Fatalf("ReturnsToGo = %v, want %v", ret[0], wantRet)
		}
	}
	// With zero values, GAE with γ = λ = 1 gives the returns-to-go; the targets equal them too.
	values := Zeros(1, len(mask[0]))
	adv, targets := GAEAdvantages(rewards, values, mask, 1, 1)
	for j := range wantRet {
		if !approx(float64(adv[0][j]), float64(wantRet[j])) || !approx(float64(targets[0][j]), float64(wantRet[j])) {
			t.Fatalf("GAE = %v / %v, want %v", adv[0], targets[0], wantRet)
		}
	}
}

// TestTurnCreditMatchesBook checks the turn-level recursion on Figure 12.1's episode: from the book's TD errors
// (−0.116, −0.031, +0.070, +0.305) and λ = 0.95 the advantages are +0.179, +0.311, +0.360, +0.305.
func TestTurnCreditMatchesBook(t *testing.T) {
	r := []float64{-0.05, -0.05, -0.05, 0.95}
	delta := []float64{-0.116, -0.031, 0.070, 0.305}
	// Choose values that produce those TD errors: V_K = 0, V_k = r_k + V_{k+1} − δ_k.
	v := make([]float64, 5)
	for k := 3; k >= 0; k-- {
		v[k] = r[k] + v[k+1] - delta[k]
	}
	var rewards, values, mask []float32
	var turns []int32
	for k := range 4 {
		for j := range 2 { // two tokens per call, then one observation token
			rewards, values, mask, turns = append(rewards, 0), append(values, float32(v[k])), append(mask, 1), append(turns, int32(k))
			if j == 1 {
				rewards[len(rewards)-1] = float32(r[k])
			}
		}
		rewards, values, mask, turns = append(rewards, 0), append(values, 0), append(mask, 0), append(turns, int32(k))
	}
	calls := TurnCredit(rewards, values, mask, turns, 1, 0.95)
	want := []float64{0.179, 0.311, 0.360, 0.305}
	if len(calls) != len(want) {
		t.Fatalf("%d calls, want %d", len(calls), len(want))
	}
	for k, c := range calls {
		if math.Abs(c.TD-delta[k]) > 1e-5 || math.Abs(c.Advantage-want[k]) > 1e-3 {
			t.Errorf("call %d: δ %.4f A %.4f, want δ %.3f A %.3f", k, c.TD, c.Advantage, delta[k], want[k])
		}
	}
	adv := TurnAdvantages([][]float32{rewards}, [][]float32{values}, [][]float32{mask}, [][]int32{turns}, 1, 0.95)
	for j, m := range mask {
		if m == 0 && adv[0][j] != 0 || m == 1 && math.Abs(float64(adv[0][j])-want[turns[j]]) > 1e-3 {
			t.Fatalf("TurnAdvantages = %v", adv[0])
		}
	}
}

func TestMaskedWhiten(t *testing.T) {
	x := [][]float32{{1, 2, 100}, {3, 4, -7}}
	mask := [][]float32{{1, 1, 0}, {1, 1, 0}}
	w := MaskedWhiten(x, mask)
	if MaskedMean(w, mask) > 1e-6 || w[0][2] != 0 || w[1][2] != 0 {
		t.Fatalf("MaskedWhiten = %v", w)
	}
	sq := Zeros(2, 3)
	for b := range w {
		for j := range w[b] {
			sq[b][j] = w[b][j] * w[b][j]
		}
	}
	if v := MaskedMean(sq, mask); math.Abs(v-1) > 1e-4 {
		t.Fatalf("variance after whitening %.6f", v)
	}
}

func TestSampleNext(t *testing.T) {
	logits := []float32{0, float32(math.Log(3)), -100}
	counts := make([]int, 3)
	rng := NewRNG(1)
	for range 4000 {
		id, lp := SampleNext(logits, 1, rng)
		counts[id]++
		want := math.Log([]float64{0.25, 0.75, 0}[id])
		if math.Abs(float64(lp)-want) > 1e-4 {
			t.Fatalf("log-prob of %d = %v, want %v", id, lp, want)
		}
	}
	if counts[2] != 0 || math.Abs(float64(counts[1])/4000-0.75) > 0.03 {
		t.Fatalf("counts %v", counts)
	}
}

func TestConfigValidate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	bad := []struct {
		name  string
		set   func(*RLConfig)
		field string // named in the error
	}{
		{"no turns", func(c *RLConfig) { c.MaxTurns = 0 }, "MaxTurns"},
		{"negative edits", func(c *RLConfig) { c.MaxEdits = -1 }, "MaxEdits"},
		{"unknown loss mode", func(c *RLConfig) { c.LossMode = "mean" }, "LossMode"},
		{"zero temperature", func(c *RLConfig) { c.Temperature = 0 }, "Temperature"},
		{"infinite temperature", func(c *RLConfig) { c.Temperature = inf }, "Temperature"},
		{"NaN learning rate", func(c *RLConfig) { c.LR = nan }, "LR"},
		{"infinite learning rate", func(c *RLConfig) { c.LR = inf }, "LR"},
		{"NaN clip", func(c *RLConfig) { c.ClipEps = nan }, "ClipEps"},
		{"NaN gradient-norm clip", func(c *RLConfig) { c.MaxGradNorm = nan }, "MaxGradNorm"},
		{"negative gradient-norm clip", func(c *RLConfig) { c.MaxGradNorm = -1 }, "MaxGradNorm"},
		{"negative KL coefficient", func(c *RLConfig) { c.KLCoef = -0.1 }, "KLCoef"},
		{"NaN KL coefficient", func(c *RLConfig) { c.KLCoef = nan }, "KLCoef"},
		{"unknown reward", func(c *RLConfig) { c.Reward.Kind = "visible-ish" }, "unknown kind"},
		{"NaN step penalty", func(c *RLConfig) { c.Reward.StepPenalty = nan }, "step penalty"},
		{"infinite wrong-submit reward", func(c *RLConfig) { c.Reward.WrongSubmit = -inf }, "wrong submit"},
		{"NaN invalid penalty", func(c *RLConfig) { c.Reward.InvalidPenalty = nan }, "invalid penalty"},
		{"NaN unsubmitted reward", func(c *RLConfig) { c.Reward.Unsubmitted = nan }, "unsubmitted"},
	}
	if err := DefaultRLConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range bad {
		c := DefaultRLConfig()
		tc.set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: Validate() = %v, want an error naming %s", tc.name, err, tc.field)
		}
	}
}

// TestFoldKL checks the KL term's advantage shift A − β(1 − π_ref/π) on every policy token of a sampled batch (and
// nothing elsewhere), and that it vanishes with the sampling policy itself as the reference.
func TestFoldKL(t *testing.T) {
	tok, train := testSetup(t)
	policy := tinyPolicy(t, tok)
	other, err := gomlxmodel.New(testEngine(), policy.Config(), 11) // another draw of the same architecture
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 2, 3
	trajs, _, err := SampleStep(policy, nil, train, tok, cfg, NewRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	batch := Collate(trajs, tok.PadID)
	otherLogp, err := other.SequenceLogProbs(batch.IDs, batch.B, batch.T)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ref  *gomlxmodel.Model
		want func(i int) float64 // shift of policy position i's advantage at β = 0.5
	}{
		{"reference is the sampler", policy, func(int) float64 { return 0 }},
		{"another reference", other, func(i int) float64 {
			return -0.5 * (1 - min(math.Exp(float64(otherLogp[i]-batch.Logp[i])), 10))
		}},
	} {
		adv := make([]float32, len(batch.ActionMask))
		if err := foldKL(tc.ref, batch, adv, 0.5); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		moved := 0
		for i, got := range adv {
			want := 0.0
			if batch.ActionMask[i] != 0 {
				want = tc.want(i)
			}
			if math.Abs(float64(got)-want) > 1e-5 {
				t.Fatalf("%s: position %d: shift %g, want %g", tc.name, i, got, want)
			}
			if math.Abs(float64(got)) > 1e-3 {
				moved++
			}
		}
		if tc.ref == other && moved == 0 {
			t.Fatalf("%s: no advantage moved", tc.name)
		}
	}
}

// TestRLUpdateAnchorsToStart checks that a KL-regularized update anchors a policy without an anchor to the weights
// it had before its first update, and keeps that anchor.
func TestRLUpdateAnchorsToStart(t *testing.T) {
	tok, train := testSetup(t)
	policy := tinyPolicy(t, tok)
	start, err := policy.Clone()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns, cfg.KLCoef = 2, 2, 3, 0.1
	rng := NewRNG(1)
	for range 2 {
		trajs, _, err := SampleStep(policy, nil, train, tok, cfg, rng)
		if err != nil {
			t.Fatal(err)
		}
		batch := Collate(trajs, tok.PadID)
		adv := BroadcastAdvantages(ComputeAdvantages(batch.Rewards, cfg.GroupSize), batch.Mask())
		if _, err := RLUpdate(policy, batch, adv, cfg, rng); err != nil {
			t.Fatal(err)
		}
	}
	anchor, err := policy.Anchor()
	if err != nil {
		t.Fatal(err)
	}
	weights := func(m *gomlxmodel.Model) []byte {
		var buf bytes.Buffer
		if _, err := m.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	if !bytes.Equal(weights(anchor), weights(start)) {
		t.Fatal("the anchor is not the policy as it was before its first update")
	}
	if bytes.Equal(weights(policy), weights(start)) {
		t.Fatal("the updates did not move the policy")
	}
}

// tinyPolicy is a small TinyAgent for fast tests.
func tinyPolicy(t *testing.T, tok *Tokenizer) *gomlxmodel.Model {
	t.Helper()
	m, err := gomlxmodel.New(testEngine(), gomlxmodel.Config{Vocab: tok.VocabSize(), MaxLen: ContextLen, DModel: 16, Heads: 2, Layers: 1, MLP: 32}, 3)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func testSetup(t *testing.T) (*Tokenizer, []Task) {
	t.Helper()
	all, err := MakeTasks(SplitAll)
	if err != nil {
		t.Fatal(err)
	}
	train, _ := MakeTasks(SplitTrain)
	return BuildTokenizer(all), train
}

// TestContextRolloutReproducesLockstep is the book's first check of Section 12.4: given the whole history, sampling
// one call at a time gives exactly the tokens of sampling the whole episode as one sequence, and the calls'
// log-probs add up to the episode's.
func TestContextRolloutReproducesLockstep(t *testing.T) {
	tok, train := testSetup(t)
	policy := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	tasks := []Task{train[0], train[0], train[1], train[2]}
	envs := func() []Env {
		envs, err := MakeEnvs(EnvFactoryOf(cfg), len(tasks))
		if err != nil {
			t.Fatal(err)
		}
		return envs
	}
	ref, err := RolloutBatch(policy, envs(), tasks, tok, 6, 1, NewRNG(5))
	if err != nil {
		t.Fatal(err)
	}
	eps, samples, err := ContextRolloutBatch(policy, envs(), tasks, tok, KeepObs(-1), 6, 1, NewRNG(5))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for i := range ref {
		if !slices.Equal(ref[i].IDs, eps[i].IDs) {
			t.Fatalf("episode %d differs:\n%v\n%v", i, ref[i].IDs, eps[i].IDs)
		}
		calls += eps[i].Info.NTurns
	}
	if len(samples) != calls {
		t.Fatalf("%d per-call samples for %d calls", len(samples), calls)
	}
	score := func(trajs []Trajectory) []float64 {
		b := Collate(trajs, tok.PadID)
		lp, err := policy.SequenceLogProbs(b.IDs, b.B, b.T)
		if err != nil {
			t.Fatal(err)
		}
		sums := make([]float64, b.B)
		for r, m := range b.Mask() {
			for j := range m {
				sums[r] += float64(lp[r*(b.T-1)+j] * m[j])
			}
		}
		return sums
	}
	perEpisode, perCall := score(eps), make([]float64, len(eps))
	var callTrajs []Trajectory
	for _, s := range samples {
		callTrajs = append(callTrajs, s.Sample)
	}
	for i, lp := range score(callTrajs) {
		perCall[samples[i].Episode] += lp
	}
	for b := range perEpisode {
		if math.Abs(perEpisode[b]-perCall[b]) > 1e-4 {
			t.Errorf("episode %d: log p %.6f vs per-call sum %.6f", b, perEpisode[b], perCall[b])
		}
		// The sampler's own log-probs agree with the full forward pass.
		var sampled float64
		for j, m := range eps[b].ActionMask {
			sampled += float64(eps[b].Logp[j] * m)
		}
		if math.Abs(sampled-perEpisode[b]) > 1e-3 {
			t.Errorf("episode %d: sampling log p %.6f vs scored %.6f", b, sampled, perEpisode[b])
		}
	}
	// Masking changes the views: keepObs 0 never shows tool tokens.
	maskedEps, masked, err := ContextRolloutBatch(policy, envs(), tasks, tok, KeepObs(0), 6, 1, NewRNG(5))
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, len(maskedEps))
	for _, s := range masked { // each view is ContextView(keepObs 0) of the episode before the call
		e, k := maskedEps[s.Episode], seen[s.Episode]
		seen[s.Episode]++
		start := -1
		for i := range e.IDs {
			if e.Owner[i] == OwnerPolicy && int(e.Turn[i]) == k {
				start = i
				break
			}
		}
		callLen := 0
		for _, m := range s.Sample.ActionMask {
			callLen += int(m)
		}
		want := ContextView(e.IDs[:start], e.Owner[:start], e.Turn[:start], k, 0)
		if got := s.Sample.IDs[:len(s.Sample.IDs)-callLen]; !slices.Equal(got, want) {
			t.Fatalf("episode %d call %d: view %v, want %v", s.Episode, k, got, want)
		}
	}
}

// TestTrainRLDeterministic runs a short GRPO loop twice from the same seed: the runs are bit-identical; and the
// chapter's GRPO run of it (RunLoop of GRPO, logging its episodes) trains that policy, records that history and
// logs every episode.
func TestTrainRLDeterministic(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 4, 3
	run := func() ([]StepStats, []byte) {
		p, err := base.Clone()
		if err != nil {
			t.Fatal(err)
		}
		h, err := TrainRL(p, train, tok, cfg, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := p.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return h, buf.Bytes()
	}
	h1, w1 := run()
	h2, w2 := run()
	if !slices.Equal(h1, h2) || !bytes.Equal(w1, w2) {
		t.Fatal("two runs from the same seed differ")
	}
	if h1[0].Episodes != 8 {
		t.Fatalf("step has %d episodes, want 8", h1[0].Episodes)
	}
	r, err := RunLoop(GRPO{Tasks: train, Tok: tok, Cfg: cfg, Steps: 2, LogEpisodes: true}, base)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.History, h1) || len(r.Log) != 16 || len(r.LogTask) != 16 {
		t.Fatalf("GRPO run: history %v (TrainRL's %v), %d log entries, %d log tasks", r.History, h1, len(r.Log), len(r.LogTask))
	}
	if !bytes.Equal(modelBytes(t, r.Policy), w1) {
		t.Fatal("the GRPO run's policy differs from TrainRL's")
	}
}

func TestBaseDemonstrationsCalibrated(t *testing.T) {
	tok, train := testSetup(t)
	c := DefaultBaseConfig()
	c.MappingDemos = 0
	demos, err := BaseRun{Engine: testEngine(), Config: c, Tasks: train, Tok: tok}.Demonstrations()
	if err != nil {
		t.Fatal(err)
	}
	s := BehaviorStats(demos)
	erred := 0
	for _, d := range demos {
		if d.Info.NInvalid > 0 {
			erred++
		}
	}
	share := float64(erred) / float64(len(demos))
	// The book's step-0 batch: pass 0.17, turns 3.64, submit rate 0.72, 2–8% episodes with a malformed call.
	if s.PassRate < 0.11 || s.PassRate > 0.23 || s.Turns < 3.2 || s.Turns > 4.1 || s.SubmitRate < 0.62 ||
		s.SubmitRate > 0.82 || share < 0.02 || share > 0.08 || s.Reads > 0.15 {
		t.Fatalf("demonstration mix off calibration: %+v, malformed-call episodes %.3f", s, share)
	}
}

// TestMappingDemosLearnReadCall checks the loss mask of the mapping demonstrations: the choice to read carries
// no loss, and the rest of the read call and every later call carry full loss.
func TestMappingDemosLearnReadCall(t *testing.T) {
	tok, train := testSetup(t)
	readID := tok.Encode(ToolRead)[0]
	c := DefaultBaseConfig()
	c.Demos, c.MappingDemos, c.MalformedProb = 0, 20, 0
	demos, err := BaseRun{Engine: testEngine(), Config: c, Tasks: train, Tok: tok}.Demonstrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range demos {
		var choices, learnedRead, later int
		for j, m := range d.ActionMask {
			if d.Owner[j+1] != OwnerPolicy {
				if m != 0 {
					t.Fatalf("demo %d: loss on a non-policy token at %d", i, j+1)
				}
				continue
			}
			switch {
			case d.Turn[j+1] == 0 && d.IDs[j+1] == readID:
				if m != 0 {
					t.Errorf("demo %d: mask %g on the choice to read, want 0", i, m)
				}
				choices++
			case m != 1:
				t.Errorf("demo %d: mask %g on policy token %q of call %d, want 1", i, m, tok.Itos[d.IDs[j+1]], d.Turn[j+1])
			case d.Turn[j+1] == 0:
				learnedRead++
			default:
				later++
			}
		}
		if choices != 1 || learnedRead == 0 || later == 0 {
			t.Errorf("demo %d: %d read choices, %d learned read-call tokens, %d learned later tokens",
				i, choices, learnedRead, later)
		}
	}
}

// TestDemonstrationsReread checks BaseConfig.RereadProb: at 1 every reading demonstration reads twice before its
// edit, and the second read is learned (the choice to read of a mapping demonstration is not); at 0 each reads once.
func TestDemonstrationsReread(t *testing.T) {
	tok, train := testSetup(t)
	readID := tok.Encode(ToolRead)[0]
	for _, tc := range []struct {
		p                     float64
		reads, learnedChoices int
	}{{0, 1, 0}, {1, 2, 1}} {
		c := DefaultBaseConfig()
		c.Demos, c.MappingDemos, c.MalformedProb = 0, 30, 0
		c.RereadProb = tc.p
		demos, err := BaseRun{Engine: testEngine(), Config: c, Tasks: train, Tok: tok}.Demonstrations()
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range demos {
			learned := 0
			for j, m := range d.ActionMask {
				// The first token of a call (after "<call>") names the tool.
				if d.IDs[j+1] == readID && d.IDs[j] == tok.CallStartID && m != 0 {
					learned++
				}
			}
			if d.Info.NReads != tc.reads || learned != tc.learnedChoices {
				t.Errorf("RereadProb %g, demo %d: %d reads (want %d), %d learned choices to read (want %d):\n%s",
					tc.p, i, d.Info.NReads, tc.reads, learned, tc.learnedChoices, tok.Decode(d.IDs))
			}
		}
	}
}

// TestDemonstrationsStallOnFailedTest checks BaseConfig.StallOnFailProb: a demonstration whose test reported a
// failure submits always at 0 and never at 1, while one whose tests passed always submits.
func TestDemonstrationsStallOnFailedTest(t *testing.T) {
	tok, train := testSetup(t)
	for _, p := range []float64{0, 1} {
		c := DefaultBaseConfig()
		c.Demos, c.MappingDemos = 400, 0
		c.SubmitFirstProb, c.SubmitProb, c.MalformedProb = 0, 1, 0
		c.TestsAfterEdit = []float64{0, 1}
		c.StallOnFailProb = p
		demos, err := BaseRun{Engine: testEngine(), Config: c, Tasks: train, Tok: tok}.Demonstrations()
		if err != nil {
			t.Fatal(err)
		}
		var failed, failedSubmitted, passed, passedSubmitted int
		for _, d := range demos {
			if strings.Contains(tok.Decode(d.IDs), failedOn) { // the default format names a failing input
				failed++
				if d.Info.Submitted {
					failedSubmitted++
				}
			} else {
				passed++
				if d.Info.Submitted {
					passedSubmitted++
				}
			}
		}
		wantFailedSubmitted := failed
		if p == 1 {
			wantFailedSubmitted = 0
		}
		if failed == 0 || passed == 0 || failedSubmitted != wantFailedSubmitted || passedSubmitted != passed {
			t.Errorf("StallOnFailProb %g: %d of %d demonstrations with a failed test submit (want %d), %d of %d with passing tests",
				p, failedSubmitted, failed, wantFailedSubmitted, passedSubmitted, passed)
		}
	}
}

// TestWriteRunWithCritic round-trips a run that carries a critic and metrics: every section reads back exactly,
// and the run's Base is not written.
func TestWriteRunWithCritic(t *testing.T) {
	tok, _ := testSetup(t)
	policy := tinyPolicy(t, tok)
	critic, err := gomlxmodel.NewCritic(policy, 2)
	if err != nil {
		t.Fatal(err)
	}
	run := &Run{Base: policy, Policy: policy, Critic: critic, History: []StepStats{{Step: 0, Stats: Stats{PassRate: 0.5}}},
		Log: []Info{{Submitted: true}}, LogTask: []int{3}, Metrics: map[string][]float64{"b": {1}, "a": {2, 3}}}
	var first, second bytes.Buffer
	if err := WriteRun(&first, run); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRun(testEngine(), bytes.NewReader(first.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteRun(&second, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) || back.Critic == nil || back.History[0].PassRate != 0.5 ||
		!slices.Equal(back.LogTask, run.LogTask) || !slices.Equal(back.Metrics["a"], run.Metrics["a"]) ||
		!slices.Equal(back.Metrics["b"], run.Metrics["b"]) {
		t.Fatal("run with critic does not round-trip")
	}
	if back.Base != nil {
		t.Error("ReadRun read a Base, which WriteRun does not write")
	}
	if _, err := ReadRun(testEngine(), bytes.NewReader(first.Bytes()[:first.Len()-1])); err == nil {
		t.Error("a truncated run read back without an error")
	}
}

func TestTrainContext(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns = 2, 4, 3
	baseFP := fingerprintOf(t, base)
	bad := cfg
	bad.GroupSize = 0
	for _, tc := range badRuns(train, cfg, bad) {
		if _, err := RunLoop(TrainContext{Tasks: tc.tasks, Tok: tok, Cfg: tc.cfg, Steps: 2, Context: KeepObs(1)}, base); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	fingerprint := func(keepObs int) string {
		run, err := RunLoop(TrainContext{Tasks: train, Tok: tok, Cfg: cfg, Steps: 2, Context: KeepObs(keepObs)}, base)
		if err != nil {
			t.Fatal(err)
		}
		p := run.Policy
		if p.Steps() != base.Steps()+2 {
			t.Errorf("policy took %d Adam steps in a 2-step run", p.Steps()-base.Steps())
		}
		return fingerprintOf(t, p)
	}
	masked := fingerprint(1)
	if again := fingerprint(1); again != masked {
		t.Errorf("two runs from the same seed differ: %s, %s", masked, again)
	}
	if fingerprintOf(t, base) != baseFP {
		t.Error("TrainContext changed its base")
	}
}

// creditRun is 12.2's train_credit as the chapter runs it: a GRPO run with the critic and CreditAdvantages.
func creditRun(t *testing.T, base *Model, critic *gomlxmodel.Critic, tasks []Task, tok *Tokenizer, cfg RLConfig,
	scheme string, steps int, lambda float64) (*Run, error) {
	adv := CreditAdvantages{Scheme: scheme, Lambda: lambda}
	if err := adv.Check(); err != nil {
		return nil, err
	}
	return trainedRun(base, tok, tasks, cfg, steps, nil, WithCritic(critic), WithAdvantages(adv))
}

// rampedRun is 12.7's ramped cost as the chapter runs it: a GRPO run with RampedPenalty's schedule.
func rampedRun(t *testing.T, base *Model, tasks []Task, tok *Tokenizer, cfg RLConfig, steps int) (*Run, error) {
	return trainedRun(base, tok, tasks, cfg, steps, nil, WithSchedule(RampedPenalty(cfg, steps)))
}

// creditWorkload is the small train_credit workload of the tests: the tasks and tokenizer, a tiny policy, a fresh
// critic of it, and a configuration of 2 prompts × 4 episodes, 3 turns and a 0.05 step cost.
func creditWorkload(t *testing.T) (*Tokenizer, []Task, *gomlxmodel.Model, *gomlxmodel.Critic, RLConfig) {
	t.Helper()
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	critic := must(gomlxmodel.NewCritic(base, 1))
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns, cfg.Reward.StepPenalty = 2, 4, 3, 0.05
	return tok, train, base, critic, cfg
}

// TestTrainCredit checks train_credit's input errors, that a seed gives one result, that it leaves its base and
// critic untouched, and that the two schemes train differently.
func TestTrainCredit(t *testing.T) {
	tok, train, base, critic, cfg := creditWorkload(t)
	bad := cfg
	bad.GroupSize = 0
	wrongSubmit := cfg
	wrongSubmit.Reward.WrongSubmit = -1
	for _, tc := range []struct {
		name   string
		tasks  []Task
		cfg    RLConfig
		scheme string
		lambda float64
	}{
		{"unknown scheme", train, cfg, "episode", 0.95},
		{"fewer tasks than prompts per step", train[:1], cfg, "token", 0.95},
		{"invalid config", train, bad, "turn", 0.95},
		{"lambda above 1", train, cfg, "token", 1.5},
		{"NaN lambda", train, cfg, "turn", math.NaN()},
		{"a reward term per-call rewards do not hold", train, wrongSubmit, "token", 0.95},
	} {
		if _, err := creditRun(t, base, critic, tc.tasks, tok, tc.cfg, tc.scheme, 2, tc.lambda); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	values := func(c *gomlxmodel.Critic) string { return criticProbe(t, c) }
	baseFP, criticValues := fingerprintOf(t, base), values(critic)
	train2 := func(scheme string) (string, string) {
		run, err := creditRun(t, base, critic, train, tok, cfg, scheme, 2, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.History) != 2 || run.Policy.Steps() != base.Steps()+2 {
			t.Errorf("%s: %d history entries and %d Adam steps in a 2-step run", scheme, len(run.History), run.Policy.Steps()-base.Steps())
		}
		if values(run.Critic) == criticValues {
			t.Errorf("%s: the critic did not train", scheme)
		}
		return fingerprintOf(t, run.Policy), values(run.Critic)
	}
	tokenFP, tokenCritic := train2("token")
	if fp, v := train2("token"); fp != tokenFP || v != tokenCritic {
		t.Error("two runs from the same seed differ")
	}
	if fp, _ := train2("turn"); fp == tokenFP {
		t.Error("token-level and turn-level GAE trained the same policy")
	}
	if fingerprintOf(t, base) != baseFP || values(critic) != criticValues {
		t.Error("train_credit changed its base or its critic")
	}
}

// TestWarmCritic checks that the critic warm-up is deterministic and moves the critic.
func TestWarmCritic(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.MaxTurns, cfg.GroupSize, cfg.Reward.StepPenalty = 3, 2, 0.05
	values := func(c *gomlxmodel.Critic, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		return criticProbe(t, c)
	}
	warm := values(WarmCritic(base, train[:2], tok, cfg))
	if again := values(WarmCritic(base, train[:2], tok, cfg)); again != warm {
		t.Errorf("two warm-ups differ: %s, %s", warm, again)
	}
	if fresh := values(gomlxmodel.NewCritic(base, 1)); fresh == warm {
		t.Error("the warm-up did not move the critic")
	}
}

// fingerprintOf is a short hash of m's weights and optimizer state (WriteTo's bytes): equal fingerprints mean
// equal models in these tests.
func fingerprintOf(t *testing.T, m *gomlxmodel.Model) string {
	t.Helper()
	sum := sha256.Sum256(modelBytes(t, m))
	return hex.EncodeToString(sum[:8])
}

// criticProbe is a critic's values on a fixed 8-token row, as text: equal probes mean equal critics in these tests.
func criticProbe(t *testing.T, c *gomlxmodel.Critic) string {
	t.Helper()
	probe := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	v, err := c.Values(probe, 1, len(probe))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(v)
}

// TestRampedPenalty checks the ramped cost's input errors, its per-step cost, that a seed gives one result, that
// its first step is train_rl without a cost, and that it leaves its base untouched.
func TestRampedPenalty(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns, cfg.Reward.StepPenalty = 2, 4, 3, 0.3
	bad := cfg
	bad.Reward.FreeCalls = -1
	for _, tc := range badRuns(train, cfg, bad) {
		if _, err := rampedRun(t, base, tc.tasks, tok, tc.cfg, 2); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	baseFP := fingerprintOf(t, base)
	run, err := rampedRun(t, base, train, tok, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	// The batch reward of step k is its pass rate minus that step's cost per call: 0, 0.15, 0.3.
	for k, h := range run.History {
		cost := 0.3 * float64(k) / 2
		if want := h.PassRate - cost*h.Turns; math.Abs(h.Reward-want) > 1e-9 {
			t.Errorf("step %d: reward %.4f, want pass %.4f - %.2f × turns %.4f = %.4f", k, h.Reward, h.PassRate, cost, h.Turns, want)
		}
	}
	again, err := rampedRun(t, base, train, tok, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if fingerprintOf(t, again.Policy) != fingerprintOf(t, run.Policy) {
		t.Error("two runs from the same seed differ")
	}
	// Its first step charges nothing: one ramped step is one step of train_rl without a cost.
	free := cfg
	free.Reward.StepPenalty = 0
	one, err := rampedRun(t, base, train, tok, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := base.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TrainRL(plain, train, tok, free, 1, nil); err != nil {
		t.Fatal(err)
	}
	if fingerprintOf(t, one.Policy) != fingerprintOf(t, plain) {
		t.Error("the first ramped step is not a cost-free train_rl step")
	}
	if fingerprintOf(t, base) != baseFP {
		t.Error("the ramped run changed its base")
	}
}

// TestDemonstrationsTestInformedEdits checks the test habit the demonstrations teach: an edit made after a read is
// tested in about 90% of the submitting episodes, a blind guess in about half (BlindTestsAfterEdit), and without
// BlindTestsAfterEdit both alike.
func TestDemonstrationsTestInformedEdits(t *testing.T) {
	tok, train := testSetup(t)
	testedShare := func(c BaseConfig) (informed, blind float64) {
		demos, err := BaseRun{Engine: testEngine(), Config: c, Tasks: train, Tok: tok}.Demonstrations()
		if err != nil {
			t.Fatal(err)
		}
		var n, k [2]int // [blind, informed]
		for _, d := range demos {
			if !d.Info.Submitted || d.Info.NEdits == 0 || d.Info.NInvalid > 0 {
				continue
			}
			i := min(d.Info.NReads, 1)
			n[i]++
			if d.Info.NTests > 0 {
				k[i]++
			}
		}
		return float64(k[1]) / float64(n[1]), float64(k[0]) / float64(n[0])
	}
	c := DefaultBaseConfig()
	c.Demos, c.MappingDemos = 2048, 512
	for _, tc := range []struct {
		name        string
		blindTests  []float64
		blindLo, hi float64
	}{
		{"default", c.BlindTestsAfterEdit, 0.40, 0.60},
		{"guesses tested like informed edits", nil, 0.85, 1},
	} {
		cfg := c
		cfg.BlindTestsAfterEdit = tc.blindTests
		informed, blind := testedShare(cfg)
		if informed < 0.85 || blind < tc.blindLo || blind > tc.hi {
			t.Errorf("%s: %.2f of informed edits and %.2f of blind guesses tested", tc.name, informed, blind)
		}
	}
}

// badRun is one invalid input of a training loop.
type badRun struct {
	name  string
	tasks []Task
	cfg   RLConfig
}

// badRuns are the inputs every training loop must reject: fewer tasks than a step draws, and bad, an invalid
// configuration.
func badRuns(train []Task, cfg, bad RLConfig) []badRun {
	return []badRun{
		{"fewer tasks than prompts per step", train[:cfg.PromptsPerStep-1], cfg},
		{"invalid config", train, bad},
	}
}

// transcript is what one environment saw: its prompt and every call it was sent.
type transcript struct {
	prompt string
	calls  []string
}

// transcripts records the transcript of each environment a factory makes, in the order they are made. The tasks
// and calls of a step come from the run's generator, so a run that drew from the wrong generator state shows here
// even when its statistics happen to match (an untrained policy's often do).
type transcripts []*transcript

func (tr *transcripts) of(factory EnvFactory) EnvFactory {
	return func() (Env, error) {
		env, err := factory()
		if err != nil {
			return nil, err
		}
		rec := new(transcript)
		*tr = append(*tr, rec)
		return recordingEnv{env, rec}, nil
	}
}

type recordingEnv struct {
	Env
	rec *transcript
}

func (r recordingEnv) Reset(task Task) string {
	r.rec.prompt = r.Env.Reset(task)
	return r.rec.prompt
}

func (r recordingEnv) Step(action string) (string, float64, bool, Info) {
	r.rec.calls = append(r.rec.calls, action)
	return r.Env.Step(action)
}

// texts are the transcripts as text, one per environment.
func (tr transcripts) texts() []string {
	out := make([]string, len(tr))
	for i, r := range tr {
		out[i] = r.prompt + "\n" + strings.Join(r.calls, "\n")
	}
	return out
}

// prompts are the environments' prompts.
func (tr transcripts) prompts() []string {
	out := make([]string, len(tr))
	for i, r := range tr {
		out[i] = r.prompt
	}
	return out
}

// TestEvaluate checks arl.evaluate's contract: n episodes per task in the factory's environments, on renamed
// tasks (every episode of a task under other names), reproducible from the generator's seed.
func TestEvaluate(t *testing.T) {
	tok, train := testSetup(t)
	policy := tinyPolicy(t, tok)
	cfg := DefaultRLConfig()
	cfg.MaxTurns = 2
	tasks := train[:3]
	evaluate := func(seed uint64) (Stats, []string) {
		var seen transcripts
		s, err := Evaluate(policy, tasks, tok, 2, NewRNG(seed), cfg, seen.of(EnvFactoryOf(cfg)))
		if err != nil {
			t.Fatal(err)
		}
		return s, seen.prompts()
	}
	s, prompts := evaluate(7)
	if s.Episodes != 6 || len(prompts) != 6 {
		t.Fatalf("%d episodes, %d prompts, want 6", s.Episodes, len(prompts))
	}
	for i, p := range prompts {
		if i%2 == 1 && p == prompts[i-1] {
			t.Errorf("both episodes of task %d saw %q: the task was not renamed for each", i/2, p)
		}
	}
	if again, promptsAgain := evaluate(7); again != s || !slices.Equal(promptsAgain, prompts) {
		t.Errorf("the same seed gave %+v, then %+v", s, again)
	}
	if _, other := evaluate(8); slices.Equal(other, prompts) {
		t.Error("seeds 7 and 8 renamed the tasks alike")
	}
	bad := cfg
	bad.MaxTurns = 0
	if _, err := Evaluate(policy, tasks, tok, 2, NewRNG(7), bad, nil); err == nil {
		t.Error("MaxTurns 0: no error")
	}
}

// TestEvaluateContextFullIsEvaluate checks that with the full context EvaluateContext samples the very episodes
// that Evaluate does from the same seed (its renaming generator is its own, seeded as Evaluate's), and that
// masking changes them.
func TestEvaluateContextFullIsEvaluate(t *testing.T) {
	tok, train := testSetup(t)
	// A base agent of 40 small steps: its calls vary enough for the statistics to tell episodes apart.
	c := DefaultBaseConfig()
	c.Demos, c.MappingDemos, c.Steps, c.BatchSize = 256, 256, 40, 16
	policy, err := TrainBase(testEngine(), train, tok, c)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRLConfig()
	cfg.MaxTurns = 3
	tasks := train[:4]
	want, err := Evaluate(policy, tasks, tok, 4, NewRNG(7), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		keepObs int
		same    bool
	}{{-1, true}, {0, false}} {
		got, err := EvaluateContext(policy, tasks, tok, KeepObs(tt.keepObs), 4, 7, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if (got == want) != tt.same {
			t.Errorf("keepObs %d: %+v, Evaluate %+v, want equal %v", tt.keepObs, got, want, tt.same)
		}
	}
	bad := cfg
	bad.Temperature = 0
	if _, err := EvaluateContext(policy, tasks, tok, KeepObs(-1), 4, 7, bad); err == nil {
		t.Error("temperature 0: no error")
	}
}

func TestExplainedVariance(t *testing.T) {
	returns := [][]float32{{1, 2, 0}, {3, 4, 9}}
	mask := [][]float32{{1, 1, 0}, {1, 1, 0}} // the 0 and 9 are off the mask: mean 2.5, variance 1.25
	for _, tc := range []struct {
		name   string
		values [][]float32
		want   float64
	}{
		{"exact", [][]float32{{1, 2, 7}, {3, 4, -7}}, 1},
		{"the mean", [][]float32{{2.5, 2.5, 0}, {2.5, 2.5, 0}}, 0},
		{"a constant offset is explained away", [][]float32{{0, 1, 0}, {2, 3, 0}}, 1},
		{"half the deviations", [][]float32{{1.75, 2.25, 0}, {2.75, 3.25, 0}}, 0.75},
		{"worse than the mean", [][]float32{{4, 1, 0}, {1, 4, 0}}, 1 - 3.5/1.25}, // residuals −3, 1, 2, 0
	} {
		if got := ExplainedVariance(tc.values, returns, mask); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: explained variance %v, want %v", tc.name, got, tc.want)
		}
	}
	flat := [][]float32{{1, 1}}
	if got := ExplainedVariance(flat, flat, [][]float32{{1, 1}}); !math.IsNaN(got) {
		t.Errorf("constant returns: %v, want NaN", got)
	}
	if got := ExplainedVariance(flat, flat, [][]float32{{0, 0}}); !math.IsNaN(got) {
		t.Errorf("empty mask: %v, want NaN", got)
	}
	if got := ExplainedVariance(nil, nil, nil); !math.IsNaN(got) {
		t.Errorf("no rows: %v, want NaN", got)
	}
}

// TestTrainCreditLoopIsTheSeam checks that train_credit as the book's loop (TrainCredit) trains, bit for bit, what
// GRPO's loop with the critic and CreditAdvantages in place of the group advantage trains: the same policy with its
// optimizer state, the same critic and the same history, for both schemes, and refuses what the seam refuses.
func TestTrainCreditLoopIsTheSeam(t *testing.T) {
	tok, train := testSetup(t)
	base := tinyPolicy(t, tok)
	critic, err := gomlxmodel.NewCritic(base, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultRLConfig()
	cfg.PromptsPerStep, cfg.GroupSize, cfg.MaxTurns, cfg.Reward.StepPenalty = 2, 4, 3, 0.05
	for _, scheme := range []string{"token", "turn"} {
		seam, err := creditRun(t, base, critic, train, tok, cfg, scheme, 3, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		loop, err := RunLoop(TrainCredit{Tasks: train, Tok: tok, Cfg: cfg, Steps: 3, Scheme: scheme, Lambda: 0.95, Critic: critic}, base)
		if err != nil {
			t.Fatal(err)
		}
		if fingerprintOf(t, loop.Policy) != fingerprintOf(t, seam.Policy) || criticProbe(t, loop.Critic) != criticProbe(t, seam.Critic) {
			t.Errorf("%s: the loop's policy or critic differs from the seam's", scheme)
		}
		for i := range seam.History {
			if loop.History[i] != seam.History[i] {
				t.Errorf("%s: step %d: %+v, the seam's %+v", scheme, i, loop.History[i], seam.History[i])
			}
		}
	}
	wrongSubmit := cfg
	wrongSubmit.Reward.WrongSubmit = -1
	for _, tc := range []TrainCredit{
		{Tasks: train, Tok: tok, Cfg: cfg, Steps: 3, Scheme: "episode", Lambda: 0.95, Critic: critic},
		{Tasks: train, Tok: tok, Cfg: cfg, Steps: 3, Scheme: "token", Lambda: 0.95},
		{Tasks: train, Tok: tok, Cfg: wrongSubmit, Steps: 3, Scheme: "token", Lambda: 0.95, Critic: critic},
		{Tasks: train, Tok: tok, Cfg: cfg, Steps: 0, Scheme: "token", Lambda: 0.95, Critic: critic},
	} {
		if err := tc.Check(); err == nil {
			t.Errorf("%+v: no error", tc)
		}
	}
}
