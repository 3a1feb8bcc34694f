#!/usr/bin/env bash
# bench/balance.sh [--smoke]: the balance lines of bench/run_all.sh
# (sourced by it; run by itself, it is run_all.sh --only balance). A
# signed GET balance vs pgbench's prepared PK select of the member row and
# vs pgbench SELECT mr_balance(...), 32 clients each.
[ "${BASH_SOURCE[0]}" != "$0" ] || exec "$(dirname "$0")/run_all.sh" --only balance "$@"

# The floor and the API take turns, a slice each per round (as the edge
# lines do): on a shared machine a floor measured once, before the API,
# varies too much with the neighbours' load to compare with.
rounds=$(rounds_of 5)
slice=$(( secs / rounds > 0 ? secs / rounds : 1 ))  # pgbench -T takes whole seconds
echo "balance (32 clients, $rounds rounds of ${slice}s)" >&2
member_id=$(q -c "SELECT member_id FROM members WHERE club_id = $club AND external_id = 'small'")
for ((round = 1; round <= rounds; round++)); do
  secs=$slice pg "pgbench PK select, round $round" 32 pgbench_member_pk.sql -D member="$member_id"
  tally pk "$rounds"
  run_secs=$slice http "GET balance, round $round" --url "$api" --conns 32 --method GET \
    --path /api/v1/members/small/balance "${signed[@]}"
  tally balance "$rounds"
done
pk=$(printf '%.1f' "${t_rate[pk]}")
pg_tallied_row pk "pgbench -M prepared PK select of the member row (floor)" "1.00"
pg "pgbench mr_balance" 32 pgbench_balance_fn.sql -D club="$club" -D member=small
pg_row "pgbench -M prepared SELECT mr_balance(...)" "$(ratio "$rate" "$pk") of PK select"
tallied_row balance "signed GET balance" "$(ratio "${t_rate[balance]}" "$pk") of PK select" "≥ 0.7"
finished+=(balance)
