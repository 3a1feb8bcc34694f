#!/usr/bin/env bash
# fixture.sh up|down <dir>: the integration tests' stack. Starts PostgreSQL,
# Redis and nginx (tools/stack.sh) on free loopback ports under <dir>, seeds
# clubs and keys, starts a second nginx node on the same PostgreSQL and Redis
# (<dir>/node2), and writes <dir>/test.env for the tests (MR_TEST_ENV).
#   MR_PG_STANDBY=1   PostgreSQL with a synchronous streaming standby (failover)
#   MR_PG_OPTS        postgres -c options [durability off, for speed]
set -euo pipefail
cmd=${1:?up|down} dir=${2:?dir}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)

# Sets each named variable to a free port, none handed out twice in this
# run (the ports are picked before anything listens on them).
taken=()
take_ports() {
  local name p
  for name in "$@"; do
    p=$("$repo/tools/free-port.sh" "${taken[@]}")
    taken+=("$p")
    printf -v "$name" %s "$p"
  done
}

if [ "$cmd" = down ]; then
  [ -f "$dir/ports.env" ] && source "$dir/ports.env"
  # Second nodes (node2, and any a test started beside it) before the stack.
  for node in "$dir"/*/; do
    [ "$node" = "$dir/stack/" ] || [ ! -f "$node/ports" ] || "$repo/tools/stack.sh" down "$node" || true
  done
  "$repo/tools/stack.sh" down "$dir/stack" || true
  exit 0
fi

# A previous aborted run may have left servers behind: stop them first.
[ -f "$dir/ports.env" ] && "$0" down "$dir"
rm -rf "$dir"; mkdir -p "$dir"
take_ports MR_PORT MR_PG_PORT MR_REDIS_PORT MR_OPS_PORT
export MR_PORT MR_PG_PORT MR_REDIS_PORT MR_OPS_PORT
# Durability is not under test here (unless the caller says so); speed is welcome.
export MR_PG_OPTS=${MR_PG_OPTS-"-c fsync=off -c synchronous_commit=off -c full_page_writes=off"}
if [ "${MR_PG_STANDBY:-}" = 1 ]; then take_ports MR_PG_STANDBY_PORT; export MR_PG_STANDBY_PORT; fi
# The tests drive one key far past 100 r/s; the limit itself is tested on a
# server of its own with the production numbers (below).
export MR_RATE_LIMIT=100000r/s MR_RATE_BURST=100000 MR_REFUSED_RATE=100000r/s MR_REFUSED_BURST=100000
# A sandbox: partners (the tests) may drive payouts with the test helper.
export MR_TEST_HELPERS=on
# Webhook delivery with waits a test can sit through, unless the caller set
# its own: four attempts a second apart, a 2 s timeout, a poll every second.
# Both nodes alike: any node's worker may send any attempt, and schedules
# the next with the schedule it has.
export MR_WEBHOOK_SCHEDULE=${MR_WEBHOOK_SCHEDULE:-"0 1s 1s 1s"} MR_WEBHOOK_TIMEOUT=${MR_WEBHOOK_TIMEOUT:-2s}
export MR_WEBHOOK_POLL=${MR_WEBHOOK_POLL:-1s}
# Redis wants a password, so every test goes through AUTH.
export MR_REDIS_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
printf "export MR_PORT=%s MR_PG_PORT=%s MR_REDIS_PORT=%s\n" "$MR_PORT" "$MR_PG_PORT" "$MR_REDIS_PORT" > "$dir/ports.env"
"$repo/tools/stack.sh" up "$dir/stack"
source "$dir/stack/stack.env"
export MR_DSN MR_MASTER_KEY_FILE
mrctl=$MR_MRCTL

club() { "$mrctl" club create --ref "$1" --name "$2" --earn-rate-bp "$3" --redemption-rate-minor 1 \
           --payout-currency GBP --currencies GBP,EUR --min-redemption 100 >/dev/null; }
key() { "$mrctl" key issue --ref "$1" --env "$2"; }
json_field() { sed -n "s/.*\"$1\" *: *\"\([^\"]*\)\".*/\1/p"; }

# club-a: the everyday club; club-c: a pool of exactly 1000 for the pool
# limit; club-d: one hot member; club-e: distinct members racing for a pool.
club club-a "Club A" 100
club club-b "Club B" 250
club club-c "Club C" 10000
club club-d "Club D" 10000
club club-e "Club E" 10000
"$mrctl" pool topup --ref club-a --points 1000000000000000 >/dev/null
"$mrctl" pool topup --ref club-b --points 1000000 >/dev/null
"$mrctl" pool topup --ref club-c --points 1000 >/dev/null
"$mrctl" pool topup --ref club-d --points 1000000 >/dev/null
"$mrctl" pool topup --ref club-e --points 5000 >/dev/null
"$mrctl" capacity topup --ref club-a --minor 1000000000000 >/dev/null
# club-f has no redemption rate; club-g's funding is restricted.
"$mrctl" club create --ref club-f --name "Club F" --earn-rate-bp 100 --payout-currency GBP --currencies GBP >/dev/null
club club-g "Club G" 100
"$mrctl" club update --ref club-g --funding-restricted true >/dev/null
"$mrctl" pool topup --ref club-g --points 1000000 >/dev/null
"$mrctl" capacity topup --ref club-g --minor 1000000 >/dev/null
# club-h: cash capacity for exactly seven redemptions of 100 points.
club club-h "Club H" 10000
"$mrctl" pool topup --ref club-h --points 100000 >/dev/null
"$mrctl" capacity topup --ref club-h --minor 700 >/dev/null
# club-i: a pool of exactly 1000 that batched settles race for.
club club-i "Club I" 10000
"$mrctl" pool topup --ref club-i --points 1000 >/dev/null
{
  for spec in "club-a sandbox A" "club-a production PRD" "club-b sandbox B" "club-a sandbox REVOKE" \
              "club-c sandbox C" "club-d sandbox D" "club-e sandbox E" "club-f sandbox F" \
              "club-g sandbox G" "club-h sandbox H" "club-i sandbox I"; do
    set -- $spec
    out=$(key "$1" "$2")
    echo "MR_KEY_$3_ID='$(echo "$out" | json_field keyId)'"
    echo "MR_KEY_$3_SECRET='$(echo "$out" | json_field secret)'"
  done
} > "$dir/keys.env"
# The idempotency module in front of proxy_pass, with a tiny upstream
# whose every answer carries its own request id.
take_ports proxy_port upstream_port limited_port
mkdir -p "$dir/stack/nginx/conf.d"
cat > "$dir/stack/nginx/conf.d/proxy-test.conf" <<CONF
server {
    listen 127.0.0.1:$upstream_port;
    default_type application/json;
    location /rejected { return 409 '{"ok":false,"error":{"code":"member_closed","message":"x","requestId":"\$request_id"}}'; }
    location / { return 200 '{"ok":true,"data":{"upstreamRequestId":"\$request_id"}}'; }
}
limit_req_zone \$mr_key_id zone=mr_keys_strict:1m rate=100r/s;
limit_req_zone \$mr_unauthenticated_addr zone=mr_refused_strict:1m rate=10r/s;
server {
    listen 127.0.0.1:$limited_port;
    limit_req zone=mr_keys_strict burst=200 nodelay;
    limit_req zone=mr_refused_strict burst=50 nodelay;
    access_log logs/limited-access.log mr_json;
    include snippets/mr-partner-api.conf;
}
server {
    listen 127.0.0.1:$proxy_port;
    mr_request_id on;
    location / {
        mr_auth on;
        mr_idempotency on;
        proxy_pass http://127.0.0.1:$upstream_port;
    }
}
CONF
echo "MR_PROXY_URL='http://127.0.0.1:$proxy_port'" >> "$dir/keys.env"
echo "MR_LIMITED_URL='http://127.0.0.1:$limited_port'" >> "$dir/keys.env"
"$repo/tools/stack.sh" reload "$dir/stack"
# A second node: its own nginx (ports, prefix) on the same PostgreSQL and
# Redis, started after the keys exist so that its catalogue has them.
take_ports node2_port node2_ops_port
MR_NODE_OF=$dir/stack MR_PORT=$node2_port MR_OPS_PORT=$node2_ops_port "$repo/tools/stack.sh" up "$dir/node2"
sed -n "s/^MR_\(BASE_URL\|RELOAD\|STACK_DIR\)=/MR_NODE2_\1=/p" "$dir/node2/stack.env" >> "$dir/keys.env"
cat "$dir/stack/stack.env" "$dir/keys.env" > "$dir/test.env"
echo "MR_REPO='$repo'" >> "$dir/test.env"
