#!/usr/bin/env bash
# Times the first `mldebug check all` on a user's crate that was built once, and a rerun.
#
# A fresh copy of examples/tinylm (a candle LM that does not depend on mldebug) is built once
# with `cargo build` (the dev profile, as a user would), then checked with one command and no
# edits; the harness reuses that target dir and profile. The first check compiles only
# mldebug-diagnostics and the harness; the rerun compiles nothing. Targets (issue 14, 2 cores):
# first check under 60 s, rerun under 1 s of build time (the checks themselves come on top).
#
#   benches/first_check.sh                 # builds mldebug (dev), prints both times
#   MLDEBUG=path/to/mldebug benches/first_check.sh
#   KEEP_TARGET=dir benches/first_check.sh # reuse a target dir with candle already built
set -euo pipefail

cd "$(dirname "$0")/.."
repo="$PWD"
if [ -z "${MLDEBUG:-}" ]; then
    cargo build --bin mldebug
    MLDEBUG="${CARGO_TARGET_DIR:-$repo/target}/debug/mldebug"
fi

pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -gt 2 ]; then
    pin=(taskset -c 0,1)
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r examples/tinylm "$work/tinylm"
export CARGO_TARGET_DIR="${KEEP_TARGET:-$work/target}"
cd "$work/tinylm"

echo "building the user's crate once (cargo build, dev profile) into $CARGO_TARGET_DIR" >&2
"${pin[@]}" cargo build --offline --quiet
# A fresh harness each time: only the user's own build is reused.
rm -rf "$CARGO_TARGET_DIR/mldebug"

check=("${pin[@]}" "$MLDEBUG" check all --model crate::TinyLm --forward TinyLm::forward
    --input tokens:16x32 --vocab 48 --offline --json)

time_it() {
    local start end
    start="$(date +%s.%N)"
    "${check[@]}" >"$work/report.json" 2>"$work/stderr" || true
    end="$(date +%s.%N)"
    echo "$end - $start" | bc
}

first="$(time_it)"
if command -v hyperfine >/dev/null; then
    hyperfine --warmup 1 --runs 5 "${check[*]} || true"
fi
rerun="$(time_it)"
grep -q '"schema_version"' "$work/report.json" || { cat "$work/stderr" >&2; exit 1; }
printf 'first check all (crate built once): %.1f s\nrerun: %.1f s\n' "$first" "$rerun"
