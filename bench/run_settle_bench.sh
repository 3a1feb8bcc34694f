#!/usr/bin/env bash
# run_settle_bench.sh [concurrency] [seconds]
# In one go on a fresh local stack (own folder and ports): signed settled
# transactions for distinct members of one club through nginx, then pgbench
# running the equivalent award without any club row at the same concurrency
# against the same database. Prints both rates and their ratio.
# Run as root after tools/build.sh. Not a test: numbers vary by machine.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
conc=${1:-8} secs=${2:-20}
export MR_BUILD_DIR=${MR_BUILD_DIR:-$repo/build}
dir=$(mktemp -d /tmp/mr-bench-XXXX); chmod 755 "$dir"  # PostgreSQL runs as postgres
export MR_PORT=${MR_BENCH_PORT:-18180} MR_PG_PORT=${MR_BENCH_PG_PORT:-18432} MR_REDIS_PORT=${MR_BENCH_REDIS_PORT:-18379}
export MR_RATE_LIMIT=1000000r/s MR_RATE_BURST=1000000
trap '"$repo/tools/stack.sh" down "$dir"; rm -rf "$dir"' EXIT
"$repo/tools/stack.sh" up "$dir" >/dev/null
source "$dir/stack.env"
export MR_DSN MR_MASTER_KEY_FILE
"$MR_MRCTL" club create --ref bench --name Bench --earn-rate-bp 100 --currencies GBP >/dev/null
"$MR_MRCTL" pool topup --ref bench --points 1000000000000 >/dev/null
key=$("$MR_MRCTL" key issue --ref bench --env sandbox)
"$repo/tools/stack.sh" reload "$dir"
kid=$(sed -n 's/.*"keyId":"\([^"]*\)".*/\1/p' <<<"$key")
secret=$(sed -n 's/.*"secret":"\([^"]*\)".*/\1/p' <<<"$key")

echo "nginx: $conc clients, ${secs}s, distinct members of one club"
nginx_out=$("$MR_BUILD_DIR/bench/settle_bench" "$MR_BASE_URL" "$kid" "$secret" bench "$conc" "$secs")
echo "  $nginx_out"
nginx_tps=$(sed -n 's/.*tps=\([0-9.]*\).*/\1/p' <<<"$nginx_out")

club=$(psql -XAtq "$MR_DSN" -c "SELECT club_id FROM clubs WHERE partner_ref = 'bench'")
psql -XAtq "$MR_DSN" -c "INSERT INTO members (club_id, external_id, first_name, last_name, email)
  SELECT $club, 'pgb-' || c || '-' || m, 'B', 'M', 'b@x' FROM generate_series(0, $conc - 1) c, generate_series(1, 16) m"
echo "pgbench: the same award without any club row, $conc clients, ${secs}s"
pg_out=$(cd /tmp && runuser -u postgres -- pgbench -n -h 127.0.0.1 -p "$MR_PG_PORT" -U postgres -c "$conc" -j 2 \
           -T "$secs" -D club="$club" -f "$repo/bench/pgbench_award_no_club.sql" mr 2>&1) || { echo "pgbench failed" >&2; exit 1; }
pg_tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$pg_out" | head -1)
[ -n "$pg_tps" ] || { echo "$pg_out" >&2; exit 1; }
echo "  tps=$pg_tps"
awk -v a="$nginx_tps" -v b="$pg_tps" 'BEGIN { printf "ratio nginx/pgbench = %.2f\n", a / b }'
