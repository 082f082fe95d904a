#!/usr/bin/env bash
# Builds every fuzz target and runs each for a fixed time; fails on the first crash, leak,
# timeout or out-of-memory (libFuzzer's exit status). Usage: fuzz/run.sh [seconds per target]
# Needs cargo-fuzz; uses the installed toolchain with RUSTC_BOOTSTRAP=1 (no nightly needed).
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-30}"
export RUSTC_BOOTSTRAP=1
python3 seeds.py
cargo fuzz build -O
mkdir -p artifacts
for t in $(cargo fuzz list); do
  # markdown_oracle (the pulldown-cmark differential oracle) is new and has not had a long
  # run yet: the smoke skips it until fuzz/grow.sh has grown its corpus; run it by hand with
  # `cargo fuzz run -O markdown_oracle`. Its comparison runs in the proptests meanwhile.
  if [ "$t" = markdown_oracle ] && [ ! -d "grown/$t" ]; then
    echo "fuzz: $t skipped (no grown corpus yet)"
    continue
  fi
  echo "fuzz: $t for ${secs}s"
  log="artifacts/$t.log"
  # -rss_limit_mb and -timeout: a slow or huge input is a failure too.
  # Inputs that once crashed a target stay as seeds (fuzz/regressions/<target>/, committed),
  # and so does the corpus the long runs grew (fuzz/grown/<target>/, committed; fuzz/grow.sh):
  # the smoke starts where the last long run stopped. New finds go to corpus/<target>/ only.
  extra=()
  if [ -d "grown/$t" ]; then extra+=("grown/$t"); fi
  if [ -d "regressions/$t" ]; then extra+=("regressions/$t"); fi
  if ! cargo fuzz run -O "$t" "corpus/$t" "${extra[@]}" -- \
      -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: $t FAILED (the input is under fuzz/artifacts/$t/)"
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$log" || true
done
echo "fuzz: every target ran ${secs}s without a crash"
