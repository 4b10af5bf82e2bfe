#!/usr/bin/env bash
# Times `mldebug demo` (every check on every zoo model) in release. The README's main-job
# command must finish in under a minute of wall time on 2 cores; this script builds once, runs
# the demo pinned to 2 cores where `taskset` exists, and fails when the mean goes over the budget.
#
#   benches/demo.sh              # 5 timed runs after a warm-up (hyperfine), else one timed run
#   RUNS=10 BUDGET_S=30 benches/demo.sh
set -euo pipefail

cd "$(dirname "$0")/.."
runs="${RUNS:-5}"
budget_s="${BUDGET_S:-60}"

cargo build --release --bin mldebug
bin="$PWD/target/release/mldebug"

pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -gt 2 ]; then
    pin=(taskset -c 0,1)
fi
demo="${pin[*]} $bin demo"

if command -v hyperfine >/dev/null; then
    report="$(mktemp)"
    trap 'rm -f "$report"' EXIT
    hyperfine --warmup 1 --runs "$runs" --export-json "$report" "$demo"
    mean_s="$(sed -n 's/^ *"mean": *\([0-9.eE+-]*\),$/\1/p' "$report" | head -n 1)"
else
    echo "hyperfine not found (apt-get install hyperfine); timing one run" >&2
    start="$(date +%s.%N)"
    $demo >/dev/null
    end="$(date +%s.%N)"
    mean_s="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
fi

printf 'mldebug demo: %.2f s wall (budget %s s, %s cores)\n' "$mean_s" "$budget_s" \
    "$( [ ${#pin[@]} -gt 0 ] && echo 2 || nproc )"
if awk -v t="$mean_s" -v b="$budget_s" 'BEGIN { exit !(t > b) }'; then
    echo "over budget" >&2
    exit 1
fi
