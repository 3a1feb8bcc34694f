#!/usr/bin/env bash
# bench/settle.sh [--smoke]: the settle lines of bench/run_all.sh (sourced
# by it; run by itself, it is run_all.sh --only settle). Settled POSTs for
# many members of one club, 8 and 32 clients, vs pgbench's per-transaction
# award at the same concurrency, and the 32 against the same award
# set-based for 32 members a transaction (pgbench_award_set.sql, 4
# clients) and against the service's own mr_write_batch of 32.
[ "${BASH_SOURCE[0]}" != "$0" ] || exec "$(dirname "$0")/run_all.sh" --only settle "$@"

for c in 8 32; do
  echo "settle ($c clients)" >&2
  pg "pgbench award, $c clients" "$c" pgbench_award_no_club.sql -D club="$club"
  award=$rate
  pg_row "pgbench -M prepared per-transaction award, $c clients (floor)" "1.00"
  http "settled POST, $c connections" --url "$api" --conns "$c" "${signed[@]}" --settle bench --member-prefix pgb-
  last_row "signed settled POST, $c connections" "$(ratio "$rate" "$award") of award" \
    "$([ "$c" = 32 ] && echo "≥ 2.5" || echo "≥ 1.25")"
  [ "$c" = 32 ] && settle32=$rate
done
# The set-based floor: the same award for 32 members in one transaction
# (pgbench_award_set.sql), 4 clients; awards a second are its
# transactions a second times 32.
pg "pgbench award set-based, 32 members a transaction, 4 clients" 4 pgbench_award_set.sql -D club="$club"
awards=$(awk -v r="$rate" 'BEGIN { printf "%.1f", r * 32 }')
row "pgbench -M prepared award set-based, 32 members a transaction, 4 clients: awards/s (floor)" "$awards" \
  "$p50 (avg, per 32)" "-" "$failed" "-" "1.00" "-"
row "signed settled POST, 32 connections, against the set-based award" "$settle32" "-" "-" "-" "-" \
  "$(ratio "$settle32" "$awards") of set-based" "≥ 0.4"
# The service's own SQL at the floor's batch size: SELECT mr_write_batch
# of 32 settles for the same members (pgbench_settle_batch.sql), 4
# clients: what the ledger's rules (idempotency record, pool stripe,
# result, event) cost PostgreSQL beside the bare award, with no HTTP in
# front and every batch full. Settles a second are tps x 32.
pg "pgbench mr_write_batch of 32 settles, 4 clients" 4 pgbench_settle_batch.sql -D club="$club"
batched=$(awk -v r="$rate" 'BEGIN { printf "%.1f", r * 32 }')
row "pgbench -M prepared SELECT mr_write_batch of 32 settles, 4 clients: settles/s" "$batched" \
  "$p50 (avg, per 32)" "-" "$failed" "-" "$(ratio "$batched" "$awards") of set-based" "-"
row "signed settled POST, 32 connections, against mr_write_batch of 32" "$settle32" "-" "-" "-" "-" \
  "$(ratio "$settle32" "$batched") of it" "-"
finished+=(settle)
