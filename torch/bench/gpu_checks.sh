#!/usr/bin/env bash
# The checks that need a CUDA device, in one pass, each step bounded by a timeout and written to
# its own file under $OUT as it finishes (so a pass cut short still leaves what it measured):
#
#   env.txt       the GPU, the driver, torch
#   candle.txt    `mldebug demo --device cuda` (every zoo model, every check, on the GPU), then
#                 `check memory` on CUDA beside CPU (three clean models and the leaking twin,
#                 seeds 0-2)
#   run.txt       `mldebug run` on the GPU scripts of torch/bench/gpu (host-device syncs: a
#                 per-sample `.item()` loop and its fixed twin; AMP float16 with a GradScaler) and
#                 on the run zoo's memory leak and its twin, which take the GPU when there is
#                 one; the findings of each
#   bench.txt     the candle frame recorder's cost on a training step, CUDA then CPU
#   overhead.txt  `mldebug run`'s per-step cost on the GPT-2-5M script on the GPU
#   torch.txt     the PyTorch checks on CUDA (`check memory --torch`, `demo --torch`)
#   json.tgz      the JSON documents behind run.txt and one `check memory --json` on CUDA
#
#   MLDEBUG=<mldebug built with --features cuda> RECORDER=<its recorder bench binary> \
#   OUT=<folder> PYTHON=<python with torch> torch/bench/gpu_checks.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${MLDEBUG:?MLDEBUG: the mldebug binary built with --features cuda}
R=${RECORDER:-}
O=${OUT:-/tmp/gpu-checks}
PY=${PYTHON:-python3}
J=$(mktemp -d)  # the JSON documents, packed into one file at the end (few files come back)
mkdir -p "$O"
export PYTHONUNBUFFERED=1 MLDEBUG_PYTHON="$PY"

# One command, bounded: its output, then (on stderr) its exit status and wall time.
t() {
    local limit=$1 s rc
    shift
    s=$(date +%s%N)
    timeout "$limit" "$@"
    rc=$?
    echo "[rc=$rc wall=$((($(date +%s%N) - s) / 1000000)) ms] $*" >&2
}

# The findings of a `mldebug run --json` document, one line each.
findings() {
    "$PY" -c '
import json, sys
text = sys.stdin.read()
try:
    d = json.loads(text)
except ValueError:
    print("  (no JSON document)", text[-400:]); sys.exit()
for f in d.get("findings", []):
    print("  %-5s %-22s %s | %s" % (f["severity"], f["symptom"], f.get("where") or "-", f["summary"][:300]))
'
}

{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    "$PY" -c 'import torch; p = torch.cuda.get_device_properties(0); print("torch", torch.__version__, p.name, p.total_memory)'
    ldd "$B" | grep -E "cuda|cublas|curand|nvrtc|not found"
} >"$O/env.txt" 2>&1
cat "$O/env.txt"

{
    t 300 "$B" demo --device cuda
    for m in tiny-gpt mlp cnn tiny-gpt-activation-cache; do
        for d in cuda cpu; do
            t 120 "$B" check memory --model "zoo::$m" --device "$d" --seeds 0-2
        done
    done
    t 60 "$B" --json check memory --model zoo::tiny-gpt --device cuda >"$J/memory_tiny_gpt_cuda.json"
} >"$O/candle.txt" 2>&1
grep "rc=" "$O/candle.txt"

{
    for s in gpu/syncs_per_sample gpu/syncs_per_sample_fixed gpu/amp_fp16 \
        ../run_zoo/memory_growth ../run_zoo/memory_growth_fixed; do
        name=$(basename "$s")
        echo "== $name"
        t 120 "$B" --json run --steps 12 -- "$PY" "torch/bench/$s.py" --seed 0 >"$J/$name.json"
        findings <"$J/$name.json"
    done
    echo "== syncs_per_sample, as a person reads it"
    t 120 "$B" run --steps 6 -- "$PY" torch/bench/gpu/syncs_per_sample.py --seed 1
} >"$O/run.txt" 2>&1
grep -E "^==|rc=|  (fail|warn|info)" "$O/run.txt"

if [ -n "$R" ]; then
    {
        for d in cuda cpu; do
            MLDEBUG_BENCH_DEVICE=$d t 120 "$R" --bench --warm-up-time 1 --measurement-time 4
        done
    } >"$O/bench.txt" 2>&1
    grep -E "device:|time:|on/off|ratio|rc=" "$O/bench.txt"
fi

t 150 "$PY" torch/bench/run_overhead.py --device cuda --steps 30 >"$O/overhead.txt" 2>&1
cat "$O/overhead.txt"

{
    t 150 "$B" check memory --torch torch/zoo/tiny_gpt.py:TinyGpt --device cuda --python "$PY"
    t 150 "$B" demo --torch --device cuda --python "$PY"
} >"$O/torch.txt" 2>&1
grep "rc=" "$O/torch.txt"
tar czf "$O/json.tgz" -C "$J" .
