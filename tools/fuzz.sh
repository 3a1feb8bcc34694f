#!/usr/bin/env bash
# fuzz.sh [seconds] [target...]: runs each libFuzzer target (built by
# tools/build.sh into $MR_BUILD_DIR/fuzz) for <seconds> [300], one after the
# other (one core), from the seeds in tests/fuzz/corpus plus what earlier runs
# found, and prints each target's executions and coverage. A crash stops the
# script with the input in $MR_BUILD_DIR/fuzz/artifacts.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${MR_BUILD_DIR:-$repo/build}
seconds=${1:-300}; shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(write_bodies ops_api router read_requests timestamps auth_check
                                     idempotency_record secret_box json_text)
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:suppressions=$repo/tools/ubsan.supp"
mkdir -p "$build/fuzz/artifacts"
printf '%-20s %12s %8s %8s %8s\n' target execs exec/s cov ft
for t in "${targets[@]}"; do
  found="$build/fuzz/found/$t" log="$build/fuzz/$t.log"
  mkdir -p "$found"
  if ! "$build/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$build/fuzz/artifacts/$t-" "$found" "$repo/tests/fuzz/corpus/$t" >"$log" 2>&1; then
    echo "$t: crashed, see $log and $build/fuzz/artifacts" >&2
    exit 1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last") ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  printf '%-20s %12s %8s %8s %8s\n' "$t" "$execs" "$rate" "$cov" "$ft"
done
