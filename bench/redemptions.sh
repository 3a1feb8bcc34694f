#!/usr/bin/env bash
# bench/redemptions.sh [--smoke]: the redemption lines of bench/run_all.sh
# (sourced by it; run by itself, it is run_all.sh --only redemptions).
# Signed 1-point redemptions (202) for payout-ready members holding
# points, 32 connections, vs pgbench's per-transaction redemption as plain
# SQL (pgbench_redeem.sql), taking turns (bench/writes_lib.sh).
[ "${BASH_SOURCE[0]}" != "$0" ] || exec "$(dirname "$0")/run_all.sh" --only redemptions "$@"
source "$bench/writes_lib.sh"

# Members pgb-<c>-<1..16> made payout-ready (a wallet with a bank account)
# and given 1,000,000 points each by one settle through mr_write; the
# club's cash capacity covers 10^12 one-point redemptions.
echo "redemptions (32 connections, $w_rounds rounds of ${w_slice}s)" >&2
q -c "INSERT INTO wallets (member_id, provider, wallet_ref, status, account_number, sort_code, account_name)
      SELECT member_id, 'bank', 'w-' || external_id, 'active', '12345678', '123456', 'Bench Member'
      FROM members WHERE club_id = $club AND external_id LIKE 'pgb-%'
      ON CONFLICT (member_id) DO NOTHING"
funded=$(q -c "SELECT count(*) FILTER (WHERE r->>'outcome' = 'ok') FROM (
        SELECT mr_write('settle', $club, 'bench', 'seed-funds-' || external_id, 'seed', 'seed',
                        jsonb_build_object('partnerRef', 'bench', 'eventId', 'seed-funds-' || external_id,
                          'occurredAt', '2026-11-20T10:00:00Z', 'externalMemberId', external_id,
                          'externalTransactionId', 'seed-funds-' || external_id, 'merchantId', 'm1',
                          'merchantName', 'Bench Shop', 'amountMinor', 100000000, 'currency', 'GBP',
                          'settledAt', '2026-11-20T10:00:00Z')) AS r
        FROM members WHERE club_id = $club AND external_id LIKE 'pgb-%') x")
[ "$funded" = 512 ] || { echo "FAILED: funding the redeeming members: $funded of 512 settled" >&2; exit 1; }
"$MR_MRCTL" capacity topup --ref bench --minor 1000000000000 >/dev/null
for ((round = 1; round <= w_rounds; round++)); do
  w_turn redemption-floor 32 "pgbench redemption, 32 clients, round $round" pgbench_redeem.sql -D club="$club"
  w_turn redemption-pool "$svc_conns" "pgbench redemption, $svc_conns clients, round $round" pgbench_redeem.sql -D club="$club"
  w_turn redemption-fn "$svc_conns" "pgbench mr_write redeem, $svc_conns clients, round $round" pgbench_redeem_fn.sql \
    -D club="$club"
  w_turn redemption-api api "redemption POST, round $round" --redeem bench --member-prefix pgb- --expect 202
done
w_rows redemption pgbench_redeem.sql "signed redemption POST (202, 1 point)" redeem
finished+=(redemptions)
