#!/usr/bin/env bash
# One GRPO training step of the chapter (TrainRL with DefaultRLConfig: 64 episodes of up to 6 turns, then one PPO
# update) from the chapter's RL base agent, in Go and in PyTorch, side by side: agentrl's BenchmarkGRPOStep
# (STEPS steps after a warm-up step) and grpo_bench.py (the same), alternating ROUNDS times. Prints seconds per
# step for sampling and for the update (wall and process CPU, medians over rounds) and the Go/PyTorch ratios, each
# side's workload (tokens per episode, decode steps per rollout) and the token positions each side's sampling and
# update executed per position they needed, the time Go's timed steps spent on the first calls of graphs (new
# shapes), and how far the PyTorch model's logits are from Go's.
#
#   cmd/pytorchref/grpo_compare.sh                                     # from the repository root
#   GOMLX_BACKEND=go cmd/pytorchref/grpo_compare.sh                    # the pure-Go backend
#   DECODER=split PACKING=packed cmd/pytorchref/grpo_compare.sh        # gomlxmodel's split decoder, packed updates
#   FRESH=1 cmd/pytorchref/grpo_compare.sh                             # fresh models instead of the base agent
#   ROUNDS=3 STEPS=5 TORCH_THREADS=1 GOMAXPROCS=1 cmd/pytorchref/grpo_compare.sh
#
# The base agent is the chapter's (ch12's Base) on the default backend, GOMLX_BACKEND unset: loaded from the result
# store in $AGENTRL_CACHE (else ~/.cache/agentrl), or trained there first (minutes), so both backends replay the
# same weights. dumpgym writes it with the gym that the Python side replays and the Go model's logits on a few
# sequences, which grpo_bench.py checks its own against (it fails beyond 1e-4).
# The Go side uses the engine of gomlxmodel.DefaultOptions(): GOMLX_BACKEND if set, else XLA when a PJRT CPU plugin is installed
# (go run ./kernelsetup), else the pure-Go backend, each with its one decoder schedule and update layout. PyTorch: Debian's python3-torch via PYTHON (/usr/bin/python3),
# TORCH_THREADS threads (2).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-2}
STEPS=${STEPS:-5}
PYTHON=${PYTHON:-/usr/bin/python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go_args=()
torch_args=()
if [[ "${FRESH:-}" == 1 ]]; then
  go run ./cmd/pytorchref/dumpgym > "$out/gym.json"
else
  echo "the chapter's RL base agent (made, or loaded from the store)" >&2
  env -u GOMLX_BACKEND go run ./cmd/pytorchref/dumpgym -policy "$out/base.tinyagent" -logits "$out/logits.json" > "$out/gym.json"
  go_args+=(-grpo.policy "$out/base.tinyagent")
  torch_args+=(--policy "$out/base.tinyagent" --logits "$out/logits.json")
fi
go test -c -o "$out/agentrl.test" ./agentrl
for r in $(seq "$ROUNDS"); do
  echo "round $r/$ROUNDS: Go" >&2
  (cd agentrl && "$out/agentrl.test" -test.run '^$' -test.bench '^BenchmarkGRPOStep$' -test.benchtime "${STEPS}x" "${go_args[@]}") |
    awk '/^BenchmarkGRPOStep/ {
      for (i = 3; i < NF; i += 2) v[$(i+1)] = $i
      printf "sample_s=%s update_s=%s sample_cpu_s=%s update_cpu_s=%s tokens=%s tokens_per_episode=%s decode_steps=%s",
        v["sample-s/op"], v["update-s/op"], v["sample-cpu-s/op"], v["update-cpu-s/op"], v["tokens/op"], v["tokens/episode"], v["decode-steps/op"]
      printf " sample_executed=%s sample_needed=%s update_executed=%s update_needed=%s first_calls=%s first_call_s=%s\n",
        v["sample-executed/op"], v["sample-needed/op"], v["update-executed/op"], v["update-needed/op"],
        v["first-calls/op"], v["first-call-s/op"]
    }' >> "$out/go.txt"
  echo "round $r/$ROUNDS: PyTorch" >&2
  (cd cmd/pytorchref && "$PYTHON" grpo_bench.py "$out/gym.json" "$STEPS" "${torch_args[@]}" > "$out/torch.out" 2> "$out/torch.err") ||
    { cat "$out/torch.out" "$out/torch.err" >&2; exit 1; }
  sed -n 's/^RESULT //p' "$out/torch.out" >> "$out/torch.txt"
  sed -n 's/^LOGITS //p' "$out/torch.out" | head -1 > "$out/logits.txt"
done
"$PYTHON" - "$out/go.txt" "$out/torch.txt" "$out/logits.txt" <<'PY'
import os, statistics, sys
def load(path):
    rows = [dict(kv.split("=") for kv in line.split()) for line in open(path) if line.strip()]
    return {k: statistics.median(float(r[k]) for r in rows) for k in rows[0]}
go, pt = load(sys.argv[1]), load(sys.argv[2])
fresh = os.environ.get("FRESH") == "1"
print(f"GRPO step (DefaultRLConfig, 64 episodes) from {'fresh models' if fresh else 'the chapter RL base agent'}, "
      f"median of {os.environ.get('ROUNDS', '2')} rounds of {os.environ.get('STEPS', '5')} steps")
if not fresh:
    check = dict(kv.split("=") for kv in open(sys.argv[3]).read().split())
    print(f"base agent logits, max |PyTorch - Go|: {float(check['max_abs_diff']):.2g} "
          f"(largest |logit| {float(check['max_abs_logit']):.3g}, {check['positions']} positions)")
print(f"{'':<8}{'wall s':>24}{'':>8}{'CPU s':>24}")
print(f"{'phase':<8}{'Go':>12}{'PyTorch':>12}{'ratio':>8}{'Go':>12}{'PyTorch':>12}{'ratio':>8}")
for name in ("sample", "update"):
    gw, tw, gc, tc = go[name + "_s"], pt[name + "_s"], go[name + "_cpu_s"], pt[name + "_cpu_s"]
    print(f"{name:<8}{gw:>12.3f}{tw:>12.3f}{gw / tw:>8.2f}{gc:>12.3f}{tc:>12.3f}{gc / tc:>8.2f}")
gw, tw = go["sample_s"] + go["update_s"], pt["sample_s"] + pt["update_s"]
gc, tc = go["sample_cpu_s"] + go["update_cpu_s"], pt["sample_cpu_s"] + pt["update_cpu_s"]
print(f"{'step':<8}{gw:>12.3f}{tw:>12.3f}{gw / tw:>8.2f}{gc:>12.3f}{tc:>12.3f}{gc / tc:>8.2f}")
print(f"{'workload per step':<36}{'Go':>16}{'PyTorch':>16}")
print(f"{'tokens/episode':<36}{go['tokens_per_episode']:>16.1f}{pt['tokens_per_episode']:>16.1f}")
print(f"{'decode steps/rollout':<36}{go['decode_steps']:>16.1f}{pt['decode_steps']:>16.1f}")
for name in ("sample", "update"):
    g = go[name + "_executed"] / max(go[name + "_needed"], 1)
    t = pt[name + "_executed"] / max(pt[name + "_needed"], 1)
    print(f"{name + ' executed/needed positions':<36}{g:>16.2f}{t:>16.2f}")
    print(f"{'  executed, needed':<36}{go[name + '_executed']:>8.0f},{go[name + '_needed']:>7.0f}"
          f"{pt[name + '_executed']:>8.0f},{pt[name + '_needed']:>7.0f}")
print(f"Go graphs first called in the timed steps (compiled, or loaded from the cache): {go['first_calls']:.1f} "
      f"per step, {go['first_call_s']:.3f} s per step (included above)")
print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))
print("GoMLX backend:", os.environ.get("GOMLX_BACKEND") or "default (gomlxmodel.DefaultOptions)",
      "| decoder:", os.environ.get("DECODER") or "auto", "| packing:", os.environ.get("PACKING") or "auto",
      "| GOMAXPROCS:", os.environ.get("GOMAXPROCS") or "default",
      "| TORCH_THREADS:", os.environ.get("TORCH_THREADS") or "2")
PY
