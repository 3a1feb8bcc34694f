#!/usr/bin/env bash
# patroni-try.sh <dir>: failover with Patroni, end to end on one machine.
# Brings up tools/patroni-local.sh's cluster (<dir>/cluster) and a stack on
# it (<dir>/stack: Redis and nginx, MR_PG_DSN naming both servers), seeds a
# club and a key, and sends awards one after another, each retried with its
# idempotency key until it is acknowledged, while Patroni switches the
# leader over (patronictl switchover) and then loses it (kill -9 of the
# leader's Patroni and postmaster: the replica takes over once the leader
# key expires). Checks that every award is in the ledger once, the balance
# is their sum, a retry after a Redis flush replays from the new leader,
# nginx was never restarted, and `mrctl audit` is clean. Leaves both up;
# stop them with `tools/stack.sh down <dir>/stack` and
# `tools/patroni-local.sh down <dir>/cluster`.
set -euo pipefail
dir=${1:?dir}
repo=$(cd "$(dirname "$0")/.." && pwd)
export MR_BUILD_DIR=${MR_BUILD_DIR:-$repo/build}
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
cluster=$dir/cluster
sign="$MR_BUILD_DIR/tools/mr-sign/mr-sign"
port() { "$repo/tools/free-port.sh"; }
patronictl() { command patronictl -c "$cluster/pg1.yml" "$@"; }
leader() { patronictl list -f json | tr '{' '\n' | sed -n 's/.*"Member": "\([^"]*\)".*"Role": "Leader".*"State": "running".*/\1/p'; }

"$repo/tools/patroni-local.sh" up "$cluster" >/dev/null
if [ ! -f "$dir/stack/stack.env" ]; then
  MR_PG_DSN=$("$repo/tools/patroni-local.sh" dsn "$cluster") MR_PORT=$(port) MR_REDIS_PORT=$(port) \
    MR_OPS_PORT=$(port) "$repo/tools/stack.sh" up "$dir/stack"
fi
source "$dir/stack/stack.env"
export MR_DSN MR_MASTER_KEY_FILE
if ! "$MR_MRCTL" club show --ref try-club >/dev/null 2>&1; then
  "$MR_MRCTL" club create --ref try-club --name "Try Club" --earn-rate-bp 100 --payout-currency GBP \
    --currencies GBP >/dev/null
  "$MR_MRCTL" pool topup --ref try-club --points 1000000000 >/dev/null
  (umask 077; "$MR_MRCTL" key issue --ref try-club --env sandbox > "$dir/key.json")
  "$repo/tools/stack.sh" reload "$dir/stack"
fi
json_field() { sed -n "s/.*\"$1\" *: *\"\([^\"]*\)\".*/\1/p" "$2"; }
export MR_KEY_ID=$(json_field keyId "$dir/key.json") MR_KEY_SECRET=$(json_field secret "$dir/key.json")

run=$(date +%s)-$$ member=m-$(date +%s)-$$
printf '{"partnerRef":"try-club","member":{"externalMemberId":"%s","firstName":"A","lastName":"B","email":"a@example.com"}}' \
  "$member" | "$sign" --method POST --path /api/v1/members --body - --send "$MR_BASE_URL" >/dev/null

awards=0 retries=0 points=0
# award <n>: worth n points (n x 100 minor at 1 %); the same key and body
# until a 200.
award() {
  local body=$dir/award.json status
  printf '{"partnerRef":"try-club","eventId":"e-%s-%s","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":"%s"},"transaction":{"externalTransactionId":"t-%s-%s","merchantId":"m","merchantName":"Shop","amountMinor":%s,"currency":"GBP","settledAt":"2026-11-20T10:00:01Z"}}' \
    "$run" "$1" "$member" "$run" "$1" "$(( $1 * 100 ))" > "$body"
  for _ in $(seq 600); do
    status=$("$sign" --method POST --path /api/v1/transactions/settled --body "$body" \
               --idempotency-key "k-$run-$1" --send "$MR_BASE_URL" 2>/dev/null | head -1 || true)
    case "$status" in
      *" 200 "*) awards=$((awards + 1)) points=$((points + $1)); return 0 ;;
      *" 503 "*|*" 409 "*|"") retries=$((retries + 1)); sleep 0.2 ;;
      *) echo "award $1: unexpected $status" >&2; return 1 ;;
    esac
  done
  echo "award $1: never acknowledged" >&2; return 1
}

nginx_pids=$(cat "$MR_STACK_DIR/nginx/logs/nginx.pid"; pgrep -P "$(cat "$MR_STACK_DIR/nginx/logs/nginx.pid")" | sort)
n=0
for _ in 1 2 3; do award $((++n)); done
first=$(leader)
second=$([ "$first" = pg1 ] && echo pg2 || echo pg1)
echo "leader $first; switching over to $second under load"
patronictl switchover --leader "$first" --candidate "$second" --force >"$dir/switchover.log" 2>&1 &
switchover=$!
while kill -0 "$switchover" 2>/dev/null; do award $((++n)); done
wait "$switchover"
until [ "$(leader)" = "$second" ]; do award $((++n)); done
# In synchronous mode only the synchronous standby may take over: wait
# until the old leader has rejoined as one.
until patronictl list -f json | tr '{' '\n' | grep -q "\"Member\": \"$first\".*\"Role\": \"Sync Standby\""; do
  award $((++n))
done
for _ in 1 2 3; do award $((++n)); done
echo "leader $(leader) after the switchover; $awards awards, $retries retries so far"

echo "killing $second (kill -9 of its Patroni and its postmaster)"
kill -9 "$(cat "$cluster/$second.pid")" "$(head -1 "$cluster/$second/data/postmaster.pid")"
until [ "$(leader)" = "$first" ]; do award $((++n)); done
for _ in 1 2 3; do award $((++n)); done
echo "leader $(leader) after the kill; $awards awards, $retries retries"

# Every award once, the balance their sum, the first one replayed by the
# database after Redis forgot it, nginx never restarted, the books audited.
once=$(psql "$MR_DSN" -XtAc "SELECT count(*) FROM ledger_entries WHERE external_tx_id LIKE 't-$run-%' AND entry_type = 'earn_award' GROUP BY external_tx_id HAVING count(*) <> 1" | wc -l)
listed=$(psql "$MR_DSN" -XtAc "SELECT count(DISTINCT external_tx_id) FROM ledger_entries WHERE external_tx_id LIKE 't-$run-%'")
balance=$("$sign" --method GET --path "/api/v1/members/$member/balance" --send "$MR_BASE_URL" | tail -1 |
          sed -n 's/.*"pointsBalance":\([0-9]*\).*/\1/p')
[ -z "${MR_REDIS_PASSWORD_FILE:-}" ] || export REDISCLI_AUTH="$(cat "$MR_REDIS_PASSWORD_FILE")"  # else NOAUTH, exit 0
redis-cli -h 127.0.0.1 -p "$MR_REDIS_PORT" FLUSHALL | grep -qx OK
sum=$points; before=$awards; award 1; replayed=$((awards - before))
ok=1
[ "$once" -eq 0 ] && [ "$listed" -eq "$n" ] || { echo "FAIL: $listed of $n awards in the ledger, $once not exactly once"; ok=0; }
[ "$balance" -eq "$sum" ] || { echo "FAIL: balance $balance, awards sum to $sum"; ok=0; }
[ "$replayed" -eq 1 ] && [ "$(psql "$MR_DSN" -XtAc "SELECT count(*) FROM ledger_entries WHERE external_tx_id = 't-$run-1'")" -eq 1 ] ||
  { echo "FAIL: the retry of award 1 after the failovers was not a replay"; ok=0; }
[ "$nginx_pids" = "$(cat "$MR_STACK_DIR/nginx/logs/nginx.pid"; pgrep -P "$(cat "$MR_STACK_DIR/nginx/logs/nginx.pid")" | sort)" ] ||
  { echo "FAIL: nginx restarted or lost a worker"; ok=0; }
"$MR_MRCTL" audit >/dev/null || { echo "FAIL: mrctl audit"; ok=0; }
[ "$ok" = 1 ] || exit 1
echo "OK: $n awards, each in the ledger once (balance $balance = their sum), $retries retries across a switchover and a killed leader, nginx not restarted, audit clean"
