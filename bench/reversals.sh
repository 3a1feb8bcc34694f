#!/usr/bin/env bash
# bench/reversals.sh [--smoke]: the reversal lines of bench/run_all.sh
# (sourced by it; run by itself, it is run_all.sh --only reversals).
# Signed reversed POSTs of transactions settled before the timed part (the
# ledger's own mr_write, bench/seed_settled.sql), 32 connections, vs
# pgbench's per-transaction reversal as plain SQL (pgbench_reverse.sql) at
# the same concurrency, taking turns (bench/writes_lib.sh).
[ "${BASH_SOURCE[0]}" != "$0" ] || exec "$(dirname "$0")/run_all.sh" --only reversals "$@"
source "$bench/writes_lib.sh"

# Each connection (client) reverses its own settled transactions in
# order, one a request, all written before anything is timed
# (seed_settled.sql): rva<round>- for the API, rvp<round>- for pgbench at
# 32 clients, rvp<round>s- and rvf<round>- (its mr_write) at svc_conns.
# Per connection and round: MR_BENCH_REVERSALS, default 400 a second of
# the slice at 32 (12,800 a second over 32), as many over fewer clients
# (each does more); a side that ran out fails loudly (404, or an aborted
# pgbench client), never quietly.
per=${MR_BENCH_REVERSALS:-$(( w_slice * 400 ))}
per_svc=$(( per * 32 / svc_conns ))
start=$(date +%s) got=0
for side in "rva%s-,rvp%s-:32:$per" "rvp%ss-,rvf%s-:$svc_conns:$per_svc"; do
  IFS=: read -r pattern conns n <<<"$side"
  prefixes=$(for ((round = 1; round <= w_rounds; round++)); do printf "$pattern," $round $round; done)
  seeded=$(q -v club="$club" -v prefixes="${prefixes%,}" -v conns="$conns" -v n="$n" -v from="$got" \
             -f "$repo/bench/seed_settled.sql")
  got=$(( got + seeded ))
done
want=$(( 2 * w_rounds * (32 * per + svc_conns * per_svc) ))
[ "$got" = "$want" ] || { echo "FAILED: seeding settled transactions: $got of $want written" >&2; exit 1; }
echo "reversals (32 connections, $w_rounds rounds of ${w_slice}s; $want settled transactions seeded in $(( $(date +%s) - start ))s)" >&2
for ((round = 1; round <= w_rounds; round++)); do
  w_turn reversal-floor 32 "pgbench reversal, 32 clients, round $round" pgbench_reverse.sql \
    -D club="$club" -D round="$round" -D n=-1
  w_turn reversal-pool "$svc_conns" "pgbench reversal, $svc_conns clients, round $round" pgbench_reverse.sql \
    -D club="$club" -D round="${round}s" -D n=-1
  w_turn reversal-fn "$svc_conns" "pgbench mr_write reverse, $svc_conns clients, round $round" pgbench_reverse_fn.sql \
    -D club="$club" -D round="$round" -D n=-1
  w_turn reversal-api api "reversed POST, round $round" --reverse bench --member-prefix pgb- --tx-prefix "rva$round-"
done
w_rows reversal pgbench_reverse.sql "signed reversed POST (whole amount)" reverse
finished+=(reversals)
