#!/usr/bin/env bash
# One GRPO training step of the chapter (TrainRL with DefaultRLConfig: 64 episodes of up to 6 turns, then one PPO
# update) from the chapter's RL base agent, in Go, in JAX and in PyTorch, side by side: grpostep (Go, a first step
# then STEPS steps), jax_grpo_bench.py and grpo_bench.py (the same), alternating ROUNDS times. Prints, per part
# (sampling, update, a step after the first, the first step), the medians over rounds of the wall seconds and the
# Go/JAX and Go/PyTorch ratios; per part, the new shapes Go and JAX compiled and the seconds that took (included
# in the step times), and their times and ratio without it; each side's workload; and how far JAX's and PyTorch's
# logits are from Go's and JAX's update from PyTorch's on one batch.
#
#   cmd/pytorchref/grpo_compare_jax.sh                        # from the repository root
#   ROUNDS=3 STEPS=8 cmd/pytorchref/grpo_compare_jax.sh
#   GO_XLA_CACHE=on cmd/pytorchref/grpo_compare_jax.sh        # Go with its persistent executable cache
#   GOMLX_BACKEND=go cmd/pytorchref/grpo_compare_jax.sh       # the pure-Go backend
#
# Go: gomlxmodel.NewEngine(EnvOptions()), XLA when a PJRT CPU plugin is installed (go run ./kernelsetup), with
# XLA's persistent executable cache off (AGENTRL_XLA_CACHE=off; GO_XLA_CACHE=on leaves the environment's cache
# folder, AGENTRL_XLA_CACHE_DIR or $AGENTRL_CACHE/xla-executables), so that, like JAX, every new shape compiles
# in the process. JAX: cmd/pytorchref/requirements-jax.txt in .venv-jax at the repository root, made here when it
# is missing (python3 -m venv, pip install -r), CPU only, XLA_FLAGS=JAX_XLA_FLAGS
# (--xla_force_host_platform_device_count=1). PyTorch: Debian's python3-torch via PYTHON (/usr/bin/python3) with
# TORCH_THREADS threads (2); where PYTHON cannot import torch, the PyTorch columns are left out.
# The base agent is the chapter's (ch12's Base) on the default backend, GOMLX_BACKEND unset: loaded from the result
# store in $AGENTRL_CACHE (else ~/.cache/agentrl), or trained there first (minutes).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-2}
STEPS=${STEPS:-5}
PYTHON=${PYTHON:-/usr/bin/python3}
VENV=${VENV:-.venv-jax}
JAX_XLA_FLAGS=${JAX_XLA_FLAGS:---xla_force_host_platform_device_count=1}
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "making $VENV from cmd/pytorchref/requirements-jax.txt" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q -r cmd/pytorchref/requirements-jax.txt
fi
jax_python=$(cd "$VENV/bin" && pwd)/python
torch=1
"$PYTHON" -c 'import torch' 2> /dev/null || { torch=0; echo "$PYTHON cannot import torch: Go and JAX only" >&2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "the chapter's RL base agent (made, or loaded from the store)" >&2
env -u GOMLX_BACKEND go run ./cmd/pytorchref/dumpgym -policy "$out/base.tinyagent" -logits "$out/logits.json" > "$out/gym.json"
go build -o "$out/grpostep" ./cmd/pytorchref/grpostep
go_cache=()
[[ "${GO_XLA_CACHE:-off}" == on ]] || go_cache=(AGENTRL_XLA_CACHE=off)
echo "checks: JAX's logits and one JAX update against PyTorch's" >&2
(cd cmd/pytorchref && XLA_FLAGS="$JAX_XLA_FLAGS" "$jax_python" jax_grpo_bench.py "$out/gym.json" 0 --policy "$out/base.tinyagent" \
  --logits "$out/logits.json" --update-check "$out/update" > "$out/jaxcheck.out" 2> "$out/jaxcheck.err") ||
  { cat "$out/jaxcheck.out" "$out/jaxcheck.err" >&2; exit 1; }
sed -n 's/^LOGITS //p' "$out/jaxcheck.out" > "$out/jax_logits.txt"
: > "$out/update.txt"
if [[ $torch == 1 ]]; then
  (cd cmd/pytorchref && "$PYTHON" grpo_update_check.py "$out/update" "$out/base.tinyagent") | sed -n 's/^UPDATE //p' > "$out/update.txt"
fi
for r in $(seq "$ROUNDS"); do
  echo "round $r/$ROUNDS: Go" >&2
  env "${go_cache[@]}" "$out/grpostep" -policy "$out/base.tinyagent" -steps "$STEPS" 2> "$out/go.err" | sed -n 's/^RESULT //p' >> "$out/go.txt" ||
    { cat "$out/go.err" >&2; exit 1; }
  echo "round $r/$ROUNDS: JAX" >&2
  (cd cmd/pytorchref && XLA_FLAGS="$JAX_XLA_FLAGS" "$jax_python" jax_grpo_bench.py "$out/gym.json" "$STEPS" --policy "$out/base.tinyagent" \
    > "$out/jax.out" 2> "$out/jax.err") || { cat "$out/jax.out" "$out/jax.err" >&2; exit 1; }
  sed -n 's/^RESULT //p' "$out/jax.out" >> "$out/jax.txt"
  if [[ $torch == 1 ]]; then
    echo "round $r/$ROUNDS: PyTorch" >&2
    (cd cmd/pytorchref && "$PYTHON" grpo_bench.py "$out/gym.json" "$STEPS" --policy "$out/base.tinyagent" --logits "$out/logits.json" \
      > "$out/torch.out" 2> "$out/torch.err") || { cat "$out/torch.out" "$out/torch.err" >&2; exit 1; }
    sed -n 's/^RESULT //p' "$out/torch.out" >> "$out/torch.txt"
    sed -n 's/^LOGITS //p' "$out/torch.out" | head -1 > "$out/torch_logits.txt"
  fi
done
"$jax_python" - "$out" "$torch" <<'PY'
import os, statistics, sys
out, torch = sys.argv[1], sys.argv[2] == "1"
def load(name):
    rows = [dict(kv.split("=") for kv in line.split()) for line in open(f"{out}/{name}") if line.strip()]
    return {k: statistics.median(float(r[k]) for r in rows) for k in rows[0]}
def kv(name):
    path = f"{out}/{name}"
    return dict(kv.split("=") for kv in open(path).read().split()) if os.path.exists(path) else {}
sides = {"Go": load("go.txt"), "JAX": load("jax.txt")}
if torch:
    sides["PyTorch"] = load("torch.txt")
for s in sides.values():
    s["step_s"] = s["sample_s"] + s["update_s"]
    s["first_step_s"] = s["first_sample_s"] + s["first_update_s"]
names = list(sides)
print(f"GRPO step (DefaultRLConfig, 64 episodes) from the chapter RL base agent, medians of "
      f"{os.environ.get('ROUNDS', '2')} rounds of a first step and {os.environ.get('STEPS', '5')} steps after it")
for side in ("jax", "torch"):
    c = kv(f"{side}_logits.txt")
    if c:
        print(f"base agent logits, max |{'JAX' if side == 'jax' else 'PyTorch'} - Go|: {float(c['max_abs_diff']):.2g} "
              f"(largest |logit| {float(c['max_abs_logit']):.3g}, {c['positions']} positions)")
u = kv("update.txt")
if u:
    print(f"one update on a JAX-sampled batch, JAX against PyTorch: loss {float(u['loss_jax']):.7g} against "
          f"{float(u['loss_torch']):.7g}; weights after it within {float(u['max_abs_weight_diff']):.2g} (largest step "
          f"{float(u['max_abs_step']):.2g}); per tensor the steps within {100 * float(u['max_rel_step_diff']):.2g}% "
          f"({u['worst']}; key biases, whose gradient is rounding noise, left out: steps up to {float(u['key_bias_step']):.2g})")
head = "".join(f"{n:>10}" for n in names) + f"{'Go/JAX':>9}" + (f"{'Go/PyTorch':>12}" if torch else "")
print(f"{'wall s':<30}{head}")
for label, k in (("sample", "sample_s"), ("update", "update_s"), ("step (after the first)", "step_s"),
                 ("first step", "first_step_s"), ("  its sampling", "first_sample_s"), ("  its update", "first_update_s")):
    row = "".join(f"{sides[n][k]:>10.3f}" for n in names) + f"{sides['Go'][k] / sides['JAX'][k]:>9.2f}"
    if torch:
        row += f"{sides['Go'][k] / sides['PyTorch'][k]:>12.2f}"
    print(f"{label:<30}{row}")
parts = (("sample", "sample_s", "sample_traces", "sample_compile_s"), ("update", "update_s", "update_traces", "update_compile_s"),
         ("step (after the first)", "step_s", "traces", "compile_s"),
         ("first step", "first_step_s", "first_traces", "first_compile_s"),
         ("  its sampling", "first_sample_s", "first_sample_traces", "first_sample_compile_s"),
         ("  its update", "first_update_s", "first_update_traces", "first_update_compile_s"))
print("of which compiling new shapes in the process, s (shapes): Go graphs first called (XLA cache off unless "
      "GO_XLA_CACHE=on), JAX new jit traces")
print(f"{'':<30}{'Go':>16}{'JAX':>16}")
for label, _, n, c in parts:
    print(f"{label:<30}" + "".join(f"{sides[x][c]:>9.3f} ({sides[x][n]:>4.2f})" for x in ("Go", "JAX")))
print(f"{'without it, wall s':<30}{'Go':>10}{'JAX':>10}{'Go/JAX':>9}")
for label, k, _, c in parts:
    g, j = sides["Go"][k] - sides["Go"][c], sides["JAX"][k] - sides["JAX"][c]
    print(f"{label:<30}{g:>10.3f}{j:>10.3f}{g / j:>9.2f}")
print(f"{'shapes compiled in all':<30}{sides['Go']['shapes']:>10.0f}{sides['JAX']['shapes']:>10.0f}")
print(f"{'workload per step':<30}" + "".join(f"{n:>10}" for n in names))
print(f"{'tokens/episode':<30}" + "".join(f"{sides[n]['tokens_per_episode']:>10.1f}" for n in names))
print(f"{'decode steps/rollout':<30}" + "".join(f"{sides[n]['decode_steps']:>10.1f}" for n in names))
for part in ("sample", "update"):
    print(f"{part + ' executed/needed':<30}" + "".join(
        f"{sides[n][part + '_executed'] / max(sides[n][part + '_needed'], 1):>10.2f}" for n in names))
print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))
print("GoMLX backend:", os.environ.get("GOMLX_BACKEND") or "default (EnvOptions)",
      "| Go XLA cache:", os.environ.get("GO_XLA_CACHE") or "off", "| GOMAXPROCS:", os.environ.get("GOMAXPROCS") or "default",
      "| JAX XLA_FLAGS:", os.environ.get("JAX_XLA_FLAGS") or "--xla_force_host_platform_device_count=1",
      "| TORCH_THREADS:", os.environ.get("TORCH_THREADS") or "2")
PY
