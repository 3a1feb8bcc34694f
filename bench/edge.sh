#!/usr/bin/env bash
# bench/edge.sh [--smoke]: the edge lines of bench/run_all.sh (sourced by
# it; run by itself, it is run_all.sh --only edge). A signed POST through
# mr_auth to a trivial handler (valid, and a wrong signature: 401) and a
# replay answered by mr_idempotency (from the worker's replay cache once
# the worker has seen the key), vs nginx's own `return 200` on the same
# nginx (bench/edge_server.conf), sent the same signed request; a second
# `return 200` with the partner API's request id and mr_json log shows
# what logging costs; bench/edge_work prints mr_auth's pure work per
# request (ns).
[ "${BASH_SOURCE[0]}" != "$0" ] || exec "$(dirname "$0")/run_all.sh" --only edge "$@"

body='{"partnerRef":"bench","eventId":"e-edge","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":"pgb-0-1"},"transaction":{"externalTransactionId":"edge-1","merchantId":"m1","merchantName":"Bench Shop","amountMinor":1000,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"}}'
# The floor and the three edge lines take turns, a slice each per round,
# so a change in the machine's other load hits all of them alike.
rounds=$(rounds_of 5)
echo "edge (32 connections, $rounds rounds)" >&2
replay=(--url "$api" --method POST --path /api/v1/transactions/settled --body "$body" "${signed[@]}" --idem edge-replay)
# The first request settles and is kept; every later one is a replay.
"$load" --seconds 0.3 --conns 1 "${replay[@]}" >/dev/null
for ((round = 1; round <= rounds; round++)); do
  for case in floor logged valid bad replay; do
    case $case in
      # The floor gets the very request the edge lines send, signed
      # headers and idempotency key included (it ignores them): the ratio
      # is then what mr_auth adds, not what a few more header bytes cost.
      floor) args=(--url "$edge" --method POST --path /floor --body "$body" "${signed[@]}" --idem e1) ;;
      # mr_auth wants an idempotency key on every POST; no mr_idempotency here.
      logged) args=(--url "$edge" --method POST --path /floor-logged --body "$body" "${signed[@]}" --idem e1) ;;
      valid) args=(--url "$edge" --method POST --path /healthz --body "$body" "${signed[@]}" --idem e1) ;;
      bad) args=(--url "$edge" --method POST --path /healthz --body "$body" "${signed[@]}" --idem e1
                 --bad-signature --expect 401) ;;
      replay) args=("${replay[@]}") ;;
    esac
    run_secs=$(awk -v s="$secs" -v r="$rounds" 'BEGIN { print s / r }') http "$case, round $round" --conns 32 --threads "${MR_BENCH_THREADS:-1}" "${args[@]}"
    tally "$case" "$rounds"
  done
done
edge_row() {  # case label target
  tallied_row "$1" "$2" "$([ "$1" = floor ] && echo 1.00 || echo "$(ratio "${t_rate[$1]}" "${t_rate[floor]}") of floor")" "$3"
}
edge_row floor "nginx \`return 200\` (floor)" -
edge_row logged "nginx \`return 200\`, request id and mr_json log" -
edge_row valid "signed POST, mr_auth → trivial handler" "≥ 0.9"
edge_row bad "wrong signature, mr_auth → 401" "≥ 0.9"
edge_row replay "replay, mr_auth + mr_idempotency (replay cache; Redis at a worker's first sight)" "≥ 0.7"
# The pure work under the valid line (body hash + check_request, hot
# loop): steadier than any rate here, it shows what a code change moved.
if out=$("$MR_BUILD_DIR/bench/edge_work" --requests "$([ $smoke = 1 ] && echo 20000 || echo 300000)"); then
  echo "  $out" >&2
  row "mr_auth's own work per signed POST, no nginx (bench/edge_work, hot loop)" - "$(field ns_per_request "$out") ns" - 0 - - -
else
  echo "FAILED: edge_work: $out" >&2
  failures=$((failures + 1))
fi
finished+=(edge)
