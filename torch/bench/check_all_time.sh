#!/usr/bin/env bash
# How long `mldebug check all --torch hf:<a ~5M-parameter GPT-2 config>` takes, and the driver's
# start-up (Python, import torch and transformers, the model built), over a few runs.
#   torch/bench/check_all_time.sh [MLDEBUG_BINARY] [RUNS]
# Uses $MLDEBUG_PYTHON (or the active virtualenv's python, or python3) like mldebug does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../target/debug/mldebug}"
runs="${2:-3}"
for i in $(seq "$runs"); do
    start=$(date +%s.%N)
    "$bin" --json check all --torch "hf:$here/gpt2-5m" >/dev/null 2>"$here/.stderr" || true
    end=$(date +%s.%N)
    startup=$(grep -o 'started in [0-9.]*s' "$here/.stderr" | grep -o '[0-9.]*' || echo "?")
    params=$(grep -o '[0-9]* parameters' "$here/.stderr" || echo "?")
    printf 'run %d: check all %.1f s (driver start-up %s s; %s)\n' "$i" "$(echo "$end - $start" | bc)" "$startup" "$params"
done
rm -f "$here/.stderr"
