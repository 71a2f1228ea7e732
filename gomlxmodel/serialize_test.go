package gomlxmodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func modelBytes(t testing.TB, m *Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := m.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

var testLoss = LossConfig{Kind: "ppo", ClipEps: 0.2, Aggregation: "token_mean", LR: 1e-2, MaxGradNorm: 1}

func TestCloneIsIndependent(t *testing.T) {
	cfg := tinyConfig()
	m := mustNew(t, cfg, 2)
	b := makeBatch(rand.New(rand.NewPCG(2, 3)), cfg, 3, 9)
	if _, err := m.Update(b, testLoss); err != nil { // non-zero Adam state
		t.Fatal(err)
	}
	c, err := m.Clone()
	if err != nil {
		t.Fatal(err)
	}
	before := modelBytes(t, c)
	if !bytes.Equal(before, modelBytes(t, m)) {
		t.Fatal("clone differs from its model")
	}
	st1, err := m.Update(b, testLoss)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, modelBytes(t, c)) {
		t.Fatal("updating the model changed its clone")
	}
	st2, err := c.Update(b, testLoss)
	if err != nil {
		t.Fatal(err)
	}
	if st1 != st2 || !bytes.Equal(modelBytes(t, m), modelBytes(t, c)) {
		t.Fatalf("same update on model and clone diverged: %+v vs %+v", st1, st2)
	}
}

func TestWriteReadAndSaveLoad(t *testing.T) {
	cfg := tinyConfig()
	m := mustNew(t, cfg, 4)
	b := makeBatch(rand.New(rand.NewPCG(4, 5)), cfg, 2, 6)
	if _, err := m.Update(b, testLoss); err != nil {
		t.Fatal(err)
	}
	want := modelBytes(t, m)

	r, err := ReadModel(testEng(), bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(modelBytes(t, r), want) {
		t.Fatal("ReadModel(testEng(), WriteTo) is not bit-exact")
	}
	if _, err := ReadModel(testEng(), bytes.NewReader(want[:len(want)/2])); err == nil {
		t.Error("truncated stream: no error")
	}
	if _, err := ReadCritic(testEng(), bytes.NewReader(want)); err == nil {
		t.Error("reading a policy stream as a critic: no error")
	}

	dir := t.TempDir()
	if err := mustNew(t, cfg, 99).Save(dir); err != nil { // an older checkpoint to overwrite
		t.Fatal(err)
	}
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(modelBytes(t, l), want) {
		t.Fatal("Load(Save) is not bit-exact")
	}
	if l.Steps() != 1 || l.Config() != cfg {
		t.Errorf("loaded steps %d config %+v", l.Steps(), l.Config())
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of an empty directory: no error")
	}
}

// determinismRun builds a model from a fixed seed, takes three updates and returns a digest of its
// logits, losses and final weights and Adam state.
func determinismRun(t testing.TB) string {
	cfg := tinyConfig()
	m := mustNew(t, cfg, 42)
	rng := rand.New(rand.NewPCG(42, 43))
	b := makeBatch(rng, cfg, 5, 13)
	h := sha256.New()
	for _, lc := range []LossConfig{testLoss, {Kind: "reinforce", Aggregation: "seq_mean_token_mean", LR: 1e-2}, testLoss} {
		st, err := m.Update(b, lc)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []float64{st.Loss, st.ClipFrac, st.ApproxKL} {
			_ = binary.Write(h, binary.LittleEndian, math.Float64bits(x))
		}
	}
	logits, err := m.Logits(b.IDs, b.B, b.T)
	if err != nil {
		t.Fatal(err)
	}
	_ = binary.Write(h, binary.LittleEndian, logits)
	h.Write(modelBytes(t, m))
	return fmt.Sprintf("%x", h.Sum(nil))
}

const determinismEnv = "GOMLXMODEL_DETERMINISM_CHILD"

// TestDeterminism: for a fixed seed, logits, losses and weights after several updates are
// bit-identical across runs in one process and in another process.
func TestDeterminism(t *testing.T) {
	if os.Getenv(determinismEnv) != "" {
		fmt.Printf("digest=%s\n", determinismRun(t))
		return
	}
	first, second := determinismRun(t), determinismRun(t)
	if first != second {
		t.Fatalf("two runs in one process differ: %s vs %s", first, second)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeterminism$", "-test.count=1")
	cmd.Env = append(os.Environ(), determinismEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "digest="+first) {
		t.Fatalf("child process digest differs from %s:\n%s", first, out)
	}
}

// TestResetOptimizer: a model whose Adam state was reset trains exactly as a fresh model with the same weights,
// and differently from the model that kept its state.
func TestResetOptimizer(t *testing.T) {
	cfg := tinyConfig()
	rng := rand.New(rand.NewPCG(5, 6))
	used := mustNew(t, cfg, 5)
	for range 2 {
		if _, err := used.Update(makeBatch(rng, cfg, 3, 9), testLoss); err != nil {
			t.Fatal(err)
		}
	}
	reset, err := used.Clone()
	if err != nil {
		t.Fatal(err)
	}
	reset.ResetOptimizer()
	fresh := mustNew(t, cfg, 6) // zero moments; its weights are replaced by used's
	if fresh.st.params, err = copyTensors(used.st.params); err != nil {
		t.Fatal(err)
	}
	if reset.Steps() != 0 || !bytes.Equal(modelBytes(t, reset), modelBytes(t, fresh)) {
		t.Fatal("reset model differs from a fresh model with the same weights")
	}
	next := makeBatch(rng, cfg, 3, 9)
	for _, m := range []*Model{fresh, reset, used} {
		if _, err := m.Update(next, testLoss); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(modelBytes(t, reset), modelBytes(t, fresh)) {
		t.Error("reset and fresh models took different steps")
	}
	if bytes.Equal(modelBytes(t, used), modelBytes(t, fresh)) {
		t.Error("the Adam state made no difference: the test cannot tell a reset from none")
	}
}
