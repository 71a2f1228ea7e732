#!/usr/bin/env bash
# Runs gomlxmodel's benchmarks and the PyTorch reference side by side (alternating, ROUNDS times)
# and prints the median wall times, the CPU times (all threads), and the ratios GoMLX / PyTorch.
# On a shared machine, wall times of both suffer from other processes; compare the ratios.
#
#   cmd/pytorchref/compare.sh            # from the repository root; ROUNDS=3 by default
#   ROUNDS=5 PYTHON=/usr/bin/python3 cmd/pytorchref/compare.sh
#   GOMLX_BACKEND=go cmd/pytorchref/compare.sh   # force the pure-Go backend
#
# The Go side uses the engine of gomlxmodel.DefaultOptions(): GOMLX_BACKEND if set, else XLA when a PJRT CPU plugin is
# installed (go run ./kernelsetup), else the pure-Go backend.
# Needs PyTorch for the Python given by PYTHON (Debian: apt-get install python3-torch).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
out=$(mktemp -d)
go test -c -o "$out/gomlxmodel.test" ./gomlxmodel/
for r in $(seq "$ROUNDS"); do
  (cd gomlxmodel && "$out/gomlxmodel.test" -test.run '^$' -test.bench . -test.benchtime 3x) |
    awk '/^Benchmark/ {name=$1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name); print name, $3/1e6, $5}' >> "$out/go.txt"
  "$PYTHON" cmd/pytorchref/bench.py 3 >> "$out/torch.txt"
done
"$PYTHON" - "$out/go.txt" "$out/torch.txt" <<'PY'
import os, statistics, sys
def load(path):
    d = {}
    for line in open(path):
        name, wall, cpu = line.split()
        d.setdefault(name.lower(), []).append((float(wall), float(cpu)))
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in d.items()}
go, torch = load(sys.argv[1]), load(sys.argv[2])
names = {"forward": "forward", "update": "update", "decodestep": "decode"}
print(f"{'':<10}{'wall ms':>22}{'':>8}{'CPU ms':>22}")
print(f"{'benchmark':<10}{'GoMLX':>11}{'PyTorch':>11}{'ratio':>8}{'GoMLX':>11}{'PyTorch':>11}{'ratio':>8}")
for g, t in names.items():
    (gw, gc), (tw, tc) = go[g], torch[t]
    print(f"{t:<10}{gw:>11.1f}{tw:>11.1f}{gw / tw:>8.2f}{gc:>11.1f}{tc:>11.1f}{gc / tc:>8.2f}")
print("load average:", open("/proc/loadavg").read().split()[:3])
print("GoMLX backend:", os.environ.get("GOMLX_BACKEND") or "default (gomlxmodel.DefaultOptions)")
PY
rm -rf "$out"
