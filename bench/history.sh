#!/usr/bin/env bash
# bench/history.sh [--smoke]: the history lines of bench/run_all.sh
# (sourced by it; run by itself, it is run_all.sh --only history). The
# first and oldest page of /points and /transactions for a member with
# 1,000,000 entries vs one with 10; the same pages (limit 10 and 50,
# /points also with filter=reversed) vs pgbench's prepared keyset select
# of the same rows, 32 clients each; /metrics, /readyz and mrctl audit on
# the big books vs the small ones.
[ "${BASH_SOURCE[0]}" != "$0" ] || exec "$(dirname "$0")/run_all.sh" --only history "$@"

echo "history ($big entries vs 10, 8 connections)" >&2
bearer=(--header "Authorization: Bearer $(cat "$MR_OPS_TOKEN_FILE")")
small_big() {  # label small-path big-path: the page for member small, then big; ratio big/small
  local small_rate
  http "$1, 10 entries" --url "$api" --conns 8 --method GET --path "$2" "${signed[@]}"
  small_rate=$rate
  last_row "$1, member with 10 entries" "1.00" "-"
  http "$1, $big entries" --url "$api" --conns 8 --method GET --path "$3" "${signed[@]}"
  last_row "$1, member with $big entries" "$(ratio "$rate" "$small_rate") of 10 entries" "≥ 0.5"
}
ops_line() {  # label path books [rate on the small books]
  http "$1 ($3 books)" --url "$ops" --conns 1 --method GET --path "$2" "${bearer[@]}"
  last_row "$1, $3 books (1 connection)" "$([ -n "${4:-}" ] && echo "$(ratio "$rate" "$4") of small" || echo 1.00)" "-"
}
ops_line "GET /metrics" /metrics small; metrics_small=$rate
ops_line "GET /readyz" /readyz small; readyz_small=$rate
timed "mrctl audit (small books)" "$MR_MRCTL" audit; audit_small=$secs_taken
start=$(date +%s)
q -v club="$club" -v member=big -v n="$big" -f "$repo/bench/seed_history.sql" >/dev/null
echo "  seeded $big entries in $(( $(date +%s) - start ))s" >&2
ops_line "GET /metrics" /metrics big "$metrics_small"
ops_line "GET /readyz" /readyz big "$readyz_small"
timed "mrctl audit (big books)" "$MR_MRCTL" audit
row "mrctl audit, small books" "-" "${audit_small}s" "-" "-" "-" "1.00" "-"
row "mrctl audit, $big-entry books" "-" "${secs_taken}s" "-" "-" "-" "$(ratio "$secs_taken" "$audit_small")× the time" "-"
# Page size 10, the small member's whole history: both pages then hold the
# same rows and the ratio shows what history alone costs. (With limit=50
# the big member's page holds five times the rows of the small one's, and
# the ratio read 0.49-0.60: bench/RESULTS.md.) MR_BENCH_PAGE_LIMIT sets it.
page_limit=${MR_BENCH_PAGE_LIMIT:-10}
# Oldest page: a cursor just above the page_limit oldest entries.
big_id=$(q -c "SELECT member_id FROM members WHERE club_id = $club AND external_id = 'big'")
small_id=$(q -c "SELECT member_id FROM members WHERE club_id = $club AND external_id = 'small'")
oldest() { q -c "SELECT created_ms FROM ledger_entries WHERE member_id = $1 ORDER BY created_ms LIMIT 1 OFFSET $page_limit"; }
# When the small member has no more than a page, its oldest page is the first.
small_cursor=$(oldest "$small_id"); big_cursor=$(oldest "$big_id")
[ -n "$small_cursor" ] || small_cursor=$(( $(q -c "SELECT max(created_ms) FROM ledger_entries WHERE member_id = $small_id") + 1 ))
for what in points transactions; do
  small_big "GET /$what?limit=$page_limit first page" \
    "/api/v1/members/small/$what?limit=$page_limit" "/api/v1/members/big/$what?limit=$page_limit"
  small_big "GET /$what?limit=$page_limit oldest page" \
    "/api/v1/members/small/$what?limit=$page_limit&before=$small_cursor" \
    "/api/v1/members/big/$what?limit=$page_limit&before=$big_cursor"
done

# Against PostgreSQL's own read of the same rows: pgbench
# -M prepared, a keyset select of the page's rows (limit + 1, as the API
# reads them) for the big member by its member_id: no member lookup, no
# rendering, columns as stored; the API at the same concurrency (32, as
# the balance lines; MR_BENCH_HISTORY_CONNS sets both). The floor keeps
# one plan per connection (plan_cache_mode=force_generic_plan, and the
# LIMIT written into the script): left to choose, PostgreSQL planned the
# transactions select at limit 50 again at every execution on these
# books (300 against 107 us of server CPU per page), a floor lower than
# the API's own statements, which keep theirs (ledger/sql/functions/mr_points_rows*.sql).
# Floor and API take turns, a slice each per round, as the balance lines do.
rounds=$([ $smoke = 1 ] && echo 1 || echo "${MR_BENCH_HISTORY_ROUNDS:-3}")
slice=$(( secs / rounds > 0 ? secs / rounds : 1 ))
hconns=${MR_BENCH_HISTORY_CONNS:-32}
echo "history vs keyset select ($rounds rounds of ${slice}s, $hconns connections)" >&2
keyset_sql() {  # kind limit: the floor's statement for the page of `limit`
  local n=$(( $2 + 1 ))
  case $1 in
    points) echo "SELECT * FROM ledger_entries WHERE member_id = :member AND created_ms < :before ORDER BY created_ms DESC LIMIT $n;" ;;
    reversed) echo "SELECT * FROM ledger_entries WHERE member_id = :member AND entry_type = 'earn_reversal' AND created_ms < :before ORDER BY created_ms DESC LIMIT $n;" ;;
    transactions)  # settled rows and reversal rows, the reversal's merchant fields from its transaction
      echo "SELECT * FROM ((SELECT created_ms, external_id, event_id, merchant_id, merchant_name, amount_minor, currency, points, occurred_at, settled_at FROM transactions WHERE member_id = :member AND created_ms < :before ORDER BY created_ms DESC LIMIT $n) UNION ALL (SELECT r.created_ms, t.external_id, r.event_id, t.merchant_id, t.merchant_name, r.amount_minor, t.currency, -r.points, r.occurred_at, NULL FROM reversals r JOIN transactions t USING (tx_id) WHERE r.member_id = :member AND r.created_ms < :before ORDER BY r.created_ms DESC LIMIT $n)) u ORDER BY created_ms DESC LIMIT $n;" ;;
  esac
}
oldest_cursor() {  # kind limit: createdAt just above the `limit` oldest rows of the kind
  case $1 in
    points) q -c "SELECT created_ms FROM ledger_entries WHERE member_id = $big_id ORDER BY created_ms LIMIT 1 OFFSET $2" ;;
    reversed) q -c "SELECT created_ms FROM ledger_entries WHERE member_id = $big_id AND entry_type = 'earn_reversal' ORDER BY created_ms LIMIT 1 OFFSET $2" ;;
    transactions) q -c "SELECT ms FROM (SELECT created_ms AS ms FROM transactions WHERE member_id = $big_id UNION ALL SELECT created_ms FROM reversals WHERE member_id = $big_id) u ORDER BY ms LIMIT 1 OFFSET $2" ;;
  esac
}
for kind in points reversed transactions; do
  case $kind in
    points) path=/api/v1/members/big/points filter= label=/points ;;
    reversed) path=/api/v1/members/big/points filter="&filter=reversed" label="/points?filter=reversed" ;;
    transactions) path=/api/v1/members/big/transactions filter= label=/transactions ;;
  esac
  for limit in 10 50; do
    keyset_sql "$kind" "$limit" > "$dir/keyset-$kind-$limit.sql"
    for which in first oldest; do
      if [ "$which" = first ]; then
        cursor=9223372036854775807 query="limit=$limit"
      else
        cursor=$(oldest_cursor "$kind" "$limit") query="limit=$limit&before=$cursor"
      fi
      key="$kind-$limit-$which"
      for ((round = 1; round <= rounds; round++)); do
        secs=$slice PGOPTIONS="-c plan_cache_mode=force_generic_plan" \
          pg "keyset select, $key, round $round" "$hconns" "$dir/keyset-$kind-$limit.sql" \
          -D member="$big_id" -D before="$cursor"
        tally "floor-$key" "$rounds"
        run_secs=$slice http "GET $key, round $round" --url "$api" --conns "$hconns" --method GET \
          --path "$path?$query$filter" "${signed[@]}"
        tally "api-$key" "$rounds"
      done
      pg_tallied_row "floor-$key" \
        "pgbench -M prepared keyset select of the same rows: $label limit=$limit $which page, $hconns clients (floor)" "1.00"
      tallied_row "api-$key" "GET $label limit=$limit $which page, member with $big entries, $hconns connections" \
        "$(ratio "${t_rate[api-$key]}" "${t_rate[floor-$key]}") of keyset select" "≥ 0.6"
    done
  done
done
finished+=(history)
