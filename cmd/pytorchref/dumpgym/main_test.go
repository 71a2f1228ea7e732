package main

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/agentrl-go/agentrl/gomlxmodel"
)

// python is the interpreter that has Debian's python3-torch.
const python = "/usr/bin/python3"

// TestPyTorchLogits writes a TinyAgent whose every kind of weight differs from its initialization (a few
// REINFORCE steps with random advantages move the biases and LayerNorm parameters away from 0 and 1) as dumpgym
// -policy does, and its logits as -logits does, and checks that grpo_bench.py's PyTorch model, loaded from the
// stream, computes the same logits within its tolerance of 1e-4. Skipped where PyTorch is not installed.
func TestPyTorchLogits(t *testing.T) {
	if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
		t.Skipf("PyTorch is not installed for %s (apt-get install python3-torch): %v", python, err)
	}
	g, err := dump()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := gomlxmodel.NewEngine(gomlxmodel.EnvOptions())
	if err != nil {
		t.Fatal(err)
	}
	m, err := gomlxmodel.New(eng, gomlxmodel.DefaultConfig(len(g.Itos)), 3)
	if err != nil {
		t.Fatal(err)
	}
	seqs := checkSequences(g, m.Config().MaxLen)
	rng := rand.New(rand.NewPCG(3, 4))
	B, T := 4, 48
	for range 3 {
		var ids []int32
		for _, s := range seqs[len(seqs)-B:] {
			ids = append(ids, s[:T]...)
		}
		mask, adv, old := make([]float32, B*(T-1)), make([]float32, B*(T-1)), make([]float32, B*(T-1))
		for i := range mask {
			mask[i], adv[i] = 1, float32(rng.NormFloat64())
		}
		lc := gomlxmodel.LossConfig{Kind: gomlxmodel.LossReinforce, Aggregation: gomlxmodel.TokenMean, LR: 0.02}
		if _, err := m.Update(gomlxmodel.UpdateBatch{B: B, T: T, IDs: ids, Mask: mask, OldLogp: old, Adv: adv}, lc); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	gymPath, policyPath, logitsPath := filepath.Join(dir, "gym.json"), filepath.Join(dir, "policy"), filepath.Join(dir, "logits.json")
	if err := writeFile(gymPath, func(w io.Writer) error { return json.NewEncoder(w).Encode(g) }); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(policyPath, func(w io.Writer) error { _, err := m.WriteTo(w); return err }); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(logitsPath, func(w io.Writer) error { return writeLogits(w, m, seqs) }); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "grpo_bench.py", gymPath, "0", "--policy", policyPath, "--logits", logitsPath)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "TORCH_THREADS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("grpo_bench.py: %v\n%s", err, out)
	}
	match := regexp.MustCompile(`LOGITS max_abs_diff=(\S+)`).FindSubmatch(out)
	if match == nil {
		t.Fatalf("grpo_bench.py printed no LOGITS line:\n%s", out)
	}
	diff, err := strconv.ParseFloat(string(match[1]), 64)
	if err != nil || !(diff <= 1e-4) {
		t.Fatalf("PyTorch logits differ from Go's by %s, want ≤ 1e-4", match[1])
	}
	t.Logf("%s", out)
}
