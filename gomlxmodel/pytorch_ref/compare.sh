#!/usr/bin/env bash
# Runs gomlxmodel's benchmarks and the PyTorch reference side by side (alternating, ROUNDS times)
# and prints the median times and the ratios GoMLX / PyTorch.
#
#   gomlxmodel/pytorch_ref/compare.sh            # from the repository root; ROUNDS=3 by default
#   ROUNDS=5 PYTHON=/usr/bin/python3 gomlxmodel/pytorch_ref/compare.sh
#
# Needs PyTorch for the Python given by PYTHON (Debian: apt-get install python3-torch).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
out=$(mktemp -d)
go test -c -o "$out/gomlxmodel.test" ./gomlxmodel/
for r in $(seq "$ROUNDS"); do
  (cd gomlxmodel && "$out/gomlxmodel.test" -test.run '^$' -test.bench . -test.benchtime 3x) |
    awk '/^Benchmark/ {name=$1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name); print name, $3/1e6}' >> "$out/go.txt"
  "$PYTHON" gomlxmodel/pytorch_ref/bench.py 3 >> "$out/torch.txt"
done
"$PYTHON" - "$out/go.txt" "$out/torch.txt" <<'PY'
import statistics, sys
def load(path):
    d = {}
    for line in open(path):
        name, ms = line.split()
        d.setdefault(name.lower(), []).append(float(ms))
    return {k: statistics.median(v) for k, v in d.items()}
go, torch = load(sys.argv[1]), load(sys.argv[2])
names = {"forward": "forward", "update": "update", "decodestep": "decode"}
print(f"{'benchmark':<12}{'GoMLX ms':>12}{'PyTorch ms':>12}{'ratio':>8}")
for g, t in names.items():
    print(f"{t:<12}{go[g]:>12.1f}{torch[t]:>12.1f}{go[g] / torch[t]:>8.2f}")
PY
rm -rf "$out"
