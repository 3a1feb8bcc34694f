#!/usr/bin/env bash
# bench/run_all.sh [--smoke] [--only SECTIONS]
# Every benchmark of the hot paths in one go, on a stack of its own (ports
# from tools/free-port.sh, a folder under the build dir; never the run
# command's ports), each rate next to a floor measured in the same run on
# the same machine, printed as one table. One file a section, in this
# order (each file says what its lines measure):
#   edge        bench/edge.sh         mr_auth and mr_idempotency vs nginx's `return 200`
#   balance     bench/balance.sh      signed GET balance vs pgbench's PK select
#   history     bench/history.sh      pages of a member with 1,000,000 entries vs 10, vs keyset selects
#   settle      bench/settle.sh       settled POSTs vs pgbench's award
#   reversals   bench/reversals.sh    reversed POSTs vs pgbench's plain-SQL reversal
#   redemptions bench/redemptions.sh  redemption POSTs vs pgbench's plain-SQL redemption
#   events      bench/events.sh       settles with a webhook endpoint vs none; deliveries
#   pods        bench/pods.sh         two clubs on two pods vs on one
# and the largest nginx worker RSS seen under all of it. Each section file
# run by itself (bench/edge.sh --smoke) is run_all.sh --only that section.
# What they share (the stack, the readings, the rows): bench/lib.sh.
# --smoke: about a second a line and 20,000 history entries, to catch a
# broken benchmark (ctest bench_smoke checks that every line ran and no
# request failed; it asserts no speed). --only: a comma-separated subset
# of the sections. Run as root after tools/build.sh. Exits 1 if any
# request failed or a line produced no rate.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bench=$repo/bench
sections=edge,balance,history,settle,reversals,redemptions,events,pods
smoke=0 only=$sections
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --only) only=$2; shift ;;
    *) echo "usage: $0 [--smoke] [--only $sections]" >&2; exit 2 ;;
  esac
  shift
done
wants() { [[ ",$only," == *",$1,"* ]]; }
export MR_BUILD_DIR=${MR_BUILD_DIR:-$repo/build}
source "$bench/lib.sh"
if [ $smoke = 1 ]; then secs=1 big=20000 min_ok=5; else secs=${MR_BENCH_SECONDS:-10} big=1000000 min_ok=20; fi

bench_stack_dir bench
bench_port=$(free_port)
export MR_RATE_LIMIT=1000000r/s MR_RATE_BURST=1000000
# Smoke runs check that each line works, not how fast: no fsync there.
# The full run keeps PostgreSQL's durable defaults (fsync, synchronous commit).
[ $smoke = 1 ] && export MR_PG_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
mkdir -p "$dir/nginx/conf.d"
sed -e "s|@PORT@|$bench_port|" -e "s|@LOG_OPTS@|${MR_BENCH_LOG_OPTS- buffer=64k flush=1s}|" \
  "$bench/edge_server.conf" > "$dir/nginx/conf.d/bench.conf"
bench_stack_start
edge=http://127.0.0.1:$bench_port

# One `if` a section, at the top level: a section cut short by an error
# that bash does not exit on (arithmetic, expansion) loses the rest of its
# own `if` only, and the check below names it. (Sourced, not run: the
# sections share the stack, the tallies and the rows.)
if wants edge; then source "$bench/edge.sh"; fi
if wants balance; then source "$bench/balance.sh"; fi
if wants history; then source "$bench/history.sh"; fi
if wants settle; then source "$bench/settle.sh"; fi
if wants reversals; then source "$bench/reversals.sh"; fi
if wants redemptions; then source "$bench/redemptions.sh"; fi
if wants events; then source "$bench/events.sh"; fi
if wants pods; then source "$bench/pods.sh"; fi

for section in ${only//,/ }; do
  [[ " ${finished[*]} " == *" $section "* ]] || { echo "FAILED: the $section lines stopped before their end" >&2; failures=$((failures + 1)); }
done

note_rss
row "nginx worker RSS, max over workers and run" "$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f MiB", k / 1024 }')" "-" "-" "-" "-" "-" "≤ 64 MiB"
[ "$rss_kb" -gt 0 ] || { echo "FAILED: no nginx worker RSS sampled" >&2; failures=$((failures + 1)); }

echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
     "$([ $smoke = 1 ] && echo "smoke: ${secs}s a line, NOT a measurement" || echo "${secs}s a line")"
echo
echo "| line | rate /s | p50 ms | p99 ms | failed | nginx CPU µs/req | ratio | target |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
echo
if [ "$failures" -gt 0 ]; then
  echo "$failures line(s) FAILED (see above)"
  exit 1
fi
echo "every line ran; no request failed"
