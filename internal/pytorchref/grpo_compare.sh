#!/usr/bin/env bash
# One GRPO training step (TrainRL: 64 episodes of 6 turns, then one PPO update) in Go and in PyTorch, side by side:
# agentrl's BenchmarkGRPOStep (5 steps after a warm-up step) and grpo_bench.py (the same), alternating ROUNDS times.
# Prints seconds per step for sampling and for the update (wall and process CPU, medians over rounds), the
# Go/PyTorch ratios, and the workload of each side (tokens per episode, decode steps per rollout).
#
#   internal/pytorchref/grpo_compare.sh                                     # from the repository root
#   GOMLX_BACKEND=go internal/pytorchref/grpo_compare.sh     # force the pure-Go backend
#   ROUNDS=3 STEPS=5 TORCH_THREADS=1 GOMAXPROCS=1 internal/pytorchref/grpo_compare.sh
#
# The Go side uses gomlxmodel.Backend(): GOMLX_BACKEND if set, else XLA when a PJRT CPU plugin is installed
# (go run ./kernelsetup), else the pure-Go backend. PyTorch: Debian's python3-torch via PYTHON (/usr/bin/python3),
# TORCH_THREADS threads (2). The gym the Python side replays is dumped from Go (dumpgym).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-2}
STEPS=${STEPS:-5}
PYTHON=${PYTHON:-/usr/bin/python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go run ./internal/pytorchref/dumpgym > "$out/gym.json"
go test -c -o "$out/agentrl.test" ./agentrl
for r in $(seq "$ROUNDS"); do
  echo "round $r/$ROUNDS: Go" >&2
  (cd agentrl && "$out/agentrl.test" -test.run '^$' -test.bench '^BenchmarkGRPOStep$' -test.benchtime "${STEPS}x") |
    awk '/^BenchmarkGRPOStep/ {
      for (i = 3; i < NF; i += 2) v[$(i+1)] = $i
      printf "sample_s=%s update_s=%s sample_cpu_s=%s update_cpu_s=%s tokens=%s tokens_per_episode=%s decode_steps=%s\n",
        v["sample-s/op"], v["update-s/op"], v["sample-cpu-s/op"], v["update-cpu-s/op"], v["tokens/op"], v["tokens/episode"], v["decode-steps/op"]
    }' >> "$out/go.txt"
  echo "round $r/$ROUNDS: PyTorch" >&2
  (cd internal/pytorchref && "$PYTHON" grpo_bench.py "$out/gym.json" "$STEPS" 2>/dev/null) |
    sed -n 's/^RESULT //p' >> "$out/torch.txt"
done
"$PYTHON" - "$out/go.txt" "$out/torch.txt" <<'PY'
import os, statistics, sys
def load(path):
    rows = [dict(kv.split("=") for kv in line.split()) for line in open(path) if line.strip()]
    return {k: statistics.median(float(r[k]) for r in rows) for k in rows[0]}
go, pt = load(sys.argv[1]), load(sys.argv[2])
print(f"seconds per GRPO step (64 episodes), median of {os.environ.get('ROUNDS', '2')} rounds")
print(f"{'':<8}{'wall s':>24}{'':>8}{'CPU s':>24}")
print(f"{'phase':<8}{'Go':>12}{'PyTorch':>12}{'ratio':>8}{'Go':>12}{'PyTorch':>12}{'ratio':>8}")
for name in ("sample", "update"):
    gw, tw, gc, tc = go[name + "_s"], pt[name + "_s"], go[name + "_cpu_s"], pt[name + "_cpu_s"]
    print(f"{name:<8}{gw:>12.3f}{tw:>12.3f}{gw / tw:>8.2f}{gc:>12.3f}{tc:>12.3f}{gc / tc:>8.2f}")
gw, tw = go["sample_s"] + go["update_s"], pt["sample_s"] + pt["update_s"]
gc, tc = go["sample_cpu_s"] + go["update_cpu_s"], pt["sample_cpu_s"] + pt["update_cpu_s"]
print(f"{'step':<8}{gw:>12.3f}{tw:>12.3f}{gw / tw:>8.2f}{gc:>12.3f}{tc:>12.3f}{gc / tc:>8.2f}")
print(f"workload: tokens/episode Go {go['tokens_per_episode']:.1f} PyTorch {pt['tokens_per_episode']:.1f}; "
      f"decode steps/rollout Go {go['decode_steps']:.1f} PyTorch {pt['decode_steps']:.1f}")
print("load average:", open("/proc/loadavg").read().split()[:3])
print("GoMLX backend:", os.environ.get("GOMLX_BACKEND") or "default (gomlxmodel.Backend)",
      "| GOMAXPROCS:", os.environ.get("GOMAXPROCS") or "default",
      "| TORCH_THREADS:", os.environ.get("TORCH_THREADS") or "2")
PY
