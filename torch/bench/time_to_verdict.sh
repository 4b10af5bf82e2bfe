#!/usr/bin/env bash
# Time to the first verdict: `mldebug run --steps 30` on torch/bench/gpt2_5m_train.py (the
# ~5M-parameter GPT-2, batch 8 x 128, AdamW), beside the same 30 steps run plain, clean and
# with the labels shifted in the collate function. Each pair runs one after the other, so
# compare them within a run of this script:
#   PYTHON=<venv python> MLDEBUG=target/debug/mldebug torch/bench/time_to_verdict.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
py="${PYTHON:-python3}"
mldebug="${MLDEBUG:-target/debug/mldebug}"
script=torch/bench/gpt2_5m_train.py
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
for bug in "" "--shift-in-collate"; do
    plain=$(seconds "$py" "$script" --steps 30 $bug)
    watched=$(seconds "$mldebug" run --steps 30 -- "$py" "$script" $bug)
    # Exit 1 is a verdict with a fail in it, not an error here.
    json=$("$mldebug" --json run --steps 30 -- "$py" "$script" $bug 2>/dev/null || true)
    verdict=$(printf '%s' "$json" | "$py" -c 'import json,sys; d=json.load(sys.stdin); print(", ".join(sorted({f["symptom"]+":"+f["severity"] for f in d["findings"] if f["severity"]!="info"})) or "no warn or fail")')
    printf '%-20s plain %6.1f s   watched %6.1f s   %s\n' "${bug:-clean}" "$plain" "$watched" "$verdict"
done
