#!/usr/bin/env bash
# The cost of the cross-rank probes (row samples in epoch records, batchnorm records): one DDP
# script of the run zoo under `mldebug run`, with them on and off (MLDEBUG_RUN_RANKS=0), runs
# alternating; prints each run's median step time (steps after the first, both ranks) and the
# ratio of the medians, on over off. A measurement for a person, not a test.
#
#   torch/run_zoo/bench_ranks.sh [script.py] [runs per side] [steps] [script args...]
#
# Defaults: ddp_batchnorm.py (BatchNorm records and row samples both), 3 runs, 60 steps,
# --batch-size 64 --epochs 40 (a wider batch: more rows fingerprinted per step).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
script="${1:-ddp_batchnorm.py}"
runs="${2:-3}"
steps="${3:-60}"
shift $(( $# < 3 ? $# : 3 ))
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--batch-size 64 --epochs 40)
mldebug="${MLDEBUG:-$root/target/debug/mldebug}"
python="$(bash "$root/.ci/torch-venv")"
torchrun="$(dirname "$python")/torchrun"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cd "$here"
for i in $(seq "$runs"); do
  for side in on off; do
    flag=1; [ "$side" = off ] && flag=0
    MLDEBUG_RUN_RANKS=$flag "$mldebug" run --steps "$steps" --trace "$out/$side-$i.jsonl" -- \
      "$torchrun" --standalone --nproc_per_node 2 "$script" --seed 0 "${args[@]}" >/dev/null 2>&1
  done
done
"$python" - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
def median_step(path):
    times = [r["step_s"] for r in map(json.loads, open(path))
             if r.get("kind") == "step" and r.get("step", 0) > 1 and r.get("step_s") is not None]
    return statistics.median(times)
side = {s: [median_step(f"{out}/{s}-{i}.jsonl") for i in range(1, runs + 1)] for s in ("on", "off")}
for s, xs in side.items():
    print(f"{s:>3}: median step " + ", ".join(f"{1000 * x:.2f} ms" for x in xs))
ratio = statistics.median(side["on"]) / statistics.median(side["off"])
print(f"ratio on/off of the medians: {ratio:.3f}")
PY
