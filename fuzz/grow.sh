#!/usr/bin/env bash
# A resumable long fuzz run (docs/reliability.md §4). New inputs that reach new coverage land
# in fuzz/grown/<target>/, which is committed, so the 30 s CI smoke (fuzz/run.sh) starts where
# the last long run stopped. Stop it at any time (Ctrl-C, kill): every input found so far is
# already on disk, and the next fuzz/grow.sh resumes from it. After each target's run the
# grown corpus is cut to the inputs that add coverage beyond the seeds of fuzz/seeds.py.
# Usage: fuzz/grow.sh <seconds per target> [target ...]   (default: every target)
# Needs cargo-fuzz; uses the installed toolchain with RUSTC_BOOTSTRAP=1 (no nightly needed).
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:?usage: fuzz/grow.sh <seconds per target> [target ...]}"
shift
export RUSTC_BOOTSTRAP=1
python3 seeds.py
cargo fuzz build -O
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then mapfile -t targets < <(cargo fuzz list); fi
mkdir -p artifacts
for t in "${targets[@]}"; do
  mkdir -p "grown/$t"
  extra=()
  if [ -d "regressions/$t" ]; then extra=("regressions/$t"); fi
  before=$(find "grown/$t" -type f | wc -l)
  echo "grow: $t for ${secs}s from $before grown inputs"
  # The first directory receives the finds; the others are read as seeds only.
  cargo fuzz run -O "$t" "grown/$t" "corpus/$t" "${extra[@]}" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    >"artifacts/$t.grow.log" 2>&1 || { tail -n 60 "artifacts/$t.grow.log"; echo "grow: $t FAILED (the input is under fuzz/artifacts/$t/)"; exit 1; }
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "artifacts/$t.grow.log" || true
  # Keep only what adds coverage beyond the seeds: merge the seeds, then the grown inputs,
  # into an empty directory (libFuzzer -merge=1 takes an input only for new coverage), and
  # keep the merged inputs that are not seeds.
  merged=$(mktemp -d)
  cp "corpus/$t"/* "$merged"/
  ls "corpus/$t" >"$merged.seeds"
  cargo fuzz run -O "$t" "$merged" "grown/$t" -- -merge=1 -rss_limit_mb=2048 -timeout=10 \
    >"artifacts/$t.merge.log" 2>&1 || { tail -n 30 "artifacts/$t.merge.log"; exit 1; }
  find "grown/$t" -type f -delete
  for f in "$merged"/*; do
    grep -qxF "$(basename "$f")" "$merged.seeds" || mv "$f" "grown/$t/"
  done
  rm -rf "$merged" "$merged.seeds"
  echo "grow: $t keeps $(find "grown/$t" -type f | wc -l) grown inputs ($(du -sh "grown/$t" | cut -f1))"
done
