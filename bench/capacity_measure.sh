#!/usr/bin/env bash
# bench/capacity_measure.sh: the server-side figures the capacity plan
# (docs/capacity-plan.md, bench/capacity_plan.py) takes as inputs, measured
# on a stack of its own (bench/lib.sh: ports from tools/free-port.sh, a
# folder under the build dir; PostgreSQL with its durable defaults and
# pg_stat_statements loaded):
#   per request type (settle, balance read, history page, replay, refusal
#   by a wrong signature), 32 connections for MR_BENCH_SECONDS (10) each:
#     nginx workers' CPU per answer (as bench/run_all.sh reads it),
#     PostgreSQL's CPU per answer (every server process: utime + stime from
#     /proc, reaped backends included), statement time per answer
#     (pg_stat_statements total_exec_time, top-level statements), WAL bytes,
#     WAL syncs and commits per answer (pg_stat_wal, pg_stat_database),
#     Redis commands per answer (INFO commandstats)
#   per settle, on disk: each table's growth (pg_total_relation_size,
#     indexes and TOAST included) over the rows added; Redis memory per
#     idempotency record (used_memory over keys added)
#   the machine: fdatasync/s of this disk (pg_test_fsync, one 8 kB write),
#     one Redis's GET and SET rate (redis-benchmark, 32 clients, no
#     pipelining), the connections each nginx worker holds to a pod
#   the catalogue: the master's load time and the key query's server time
#     with MR_CAPACITY_KEYS (1,000) active keys
# Prints key=value lines (stdout); copy them into bench/capacity_inputs.json
# with the date. Run as root after tools/build.sh. Exits 1 if a load failed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export MR_BUILD_DIR=${MR_BUILD_DIR:-$repo/build}
source "$repo/bench/lib.sh"
secs=${MR_BENCH_SECONDS:-10} nkeys=${MR_CAPACITY_KEYS:-1000}

bench_stack_dir capacity
# No rate limit in the way of the loads, refusals included.
export MR_RATE_LIMIT=1000000r/s MR_RATE_BURST=1000000 MR_REFUSED_RATE=1000000r/s MR_REFUSED_BURST=1000000
export MR_PG_OPTS="-c shared_preload_libraries=pg_stat_statements"
bench_stack_start
q -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
rc() { redis-cli -h 127.0.0.1 -p "$MR_REDIS_PORT" "$@"; }
redis_calls() {  # every command Redis ran so far, INFO itself left out
  rc INFO commandstats | tr -d '\r' | awk -F'[:=,]' '/^cmdstat_/ && $1 != "cmdstat_info" { n += $3 } END { print n + 0 }'
}
# One line of the database's counters: WAL position (bytes), WAL syncs,
# WAL writes, commits of database mr.
pg_counters() {
  q -F' ' -c "SELECT pg_current_wal_lsn() - '0/0', w.wal_sync, w.wal_write, d.xact_commit
              FROM pg_stat_wal w, pg_stat_database d WHERE d.datname = 'mr'"
}
# measure TYPE mr_load-ARGS...: one 32-connection load and its costs per answer.
measure() {
  local type=$1 out n0 n1 p0 p1 c0 c1 r0 r1 stmt; shift
  q -c "SELECT pg_stat_statements_reset()" >/dev/null
  c0=$(pg_counters); r0=$(redis_calls); n0=$(worker_cpu_ns); p0=$(pg_cpu_ns)
  out=$("$load" --url "$api" --conns 32 --seconds "$secs" --min-ok 20 "$@" 2>&1) || true
  n1=$(worker_cpu_ns); p1=$(pg_cpu_ns); r1=$(redis_calls); c1=$(pg_counters)
  stmt=$(q -c "SELECT coalesce(sum(total_exec_time), 0) FROM pg_stat_statements WHERE query !~* 'pg_stat'")
  local requests failed
  requests=$(field requests "$out") failed=$(field failed "$out")
  if [ -z "$requests" ] || [ "${failed:-1}" != 0 ] || [ "$requests" = 0 ]; then
    echo "FAILED: $type: $out" >&2
    failures=$((failures + 1))
    return
  fi
  echo "  $type: $out" >&2
  awk -v t="$type" -v n="$requests" -v rate="$(field rate "$out")" -v ng0="$n0" -v ng1="$n1" -v pg0="$p0" -v pg1="$p1" \
      -v r0="$r0" -v r1="$r1" -v stmt="$stmt" -v c0="$c0" -v c1="$c1" 'BEGIN {
    split(c0, a, " "); split(c1, b, " ")
    printf "%s.rate=%s\n", t, rate
    printf "%s.requests=%d\n", t, n
    printf "%s.nginx_cpu_us=%.1f\n", t, (ng1 - ng0) / 1000 / n
    printf "%s.pg_cpu_us=%.1f\n", t, (pg1 - pg0) / 1000 / n
    printf "%s.pg_statement_us=%.1f\n", t, stmt * 1000 / n
    printf "%s.wal_bytes=%.0f\n", t, (b[1] - a[1]) / n
    printf "%s.wal_syncs=%.4f\n", t, (b[2] - a[2]) / n
    printf "%s.wal_writes=%.4f\n", t, (b[3] - a[3]) / n
    printf "%s.commits=%.4f\n", t, (b[4] - a[4]) / n
    printf "%s.redis_ops=%.3f\n", t, (r1 - r0) / n
  }'
}

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), ${secs}s a load" >&2
echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load_average_before=$(cut -d' ' -f1 /proc/loadavg)"

# Settles first, on books that hold only the members: each table's growth
# is then the settles' own.
tables="transactions ledger_entries idempotency_records events webhook_deliveries members club_pool_stripes"
sizes() { q -F' ' -c "SELECT $(printf "pg_total_relation_size('%s')," $tables) pg_database_size('mr')"; }
rows() { q -F' ' -c "SELECT $(printf "(SELECT count(*) FROM %s)," $tables) 0"; }
size0=$(sizes) rows0=$(rows) mem0=$(rc INFO memory | tr -d '\r' | sed -n 's/^used_memory:\([0-9]*\)/\1/p') keys0=$(rc DBSIZE)
measure settle --settle bench --member-prefix pgb- "${signed[@]}"
q -c "CHECKPOINT"  # dirty pages written: the sizes below are on disk
size1=$(sizes) rows1=$(rows) mem1=$(rc INFO memory | tr -d '\r' | sed -n 's/^used_memory:\([0-9]*\)/\1/p') keys1=$(rc DBSIZE)
awk -v tables="$tables" -v s0="$size0" -v s1="$size1" -v r0="$rows0" -v r1="$rows1" 'BEGIN {
  nt = split(tables, t, " "); split(s0, a, " "); split(s1, b, " "); split(r0, x, " "); split(r1, y, " ")
  settles = y[1] - x[1]
  for (i = 1; i <= nt; i++) {
    printf "disk.%s.bytes_per_settle=%.0f\n", t[i], (b[i] - a[i]) / settles
    if (y[i] > x[i]) printf "disk.%s.rows_per_settle=%.3f\n", t[i], (y[i] - x[i]) / settles
  }
  printf "disk.database.bytes_per_settle=%.0f\n", (b[nt + 1] - a[nt + 1]) / settles
  printf "disk.settles_counted=%d\n", settles
}'
awk -v m0="$mem0" -v m1="$mem1" -v k0="$keys0" -v k1="$keys1" 'BEGIN {
  printf "redis.keys_added=%d\n", k1 - k0
  if (k1 > k0) printf "redis.bytes_per_key=%.0f\n", (m1 - m0) / (k1 - k0)
}'
echo "redis.idempotency_ttl_s=$(( 24 * 3600 ))"

measure balance --method GET --path /api/v1/members/small/balance "${signed[@]}"
measure history --method GET --path "/api/v1/members/small/points?limit=10" "${signed[@]}"
body='{"partnerRef":"bench","eventId":"e-cap","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":"pgb-0-1"},"transaction":{"externalTransactionId":"cap-1","merchantId":"m1","merchantName":"Bench Shop","amountMinor":1000,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"}}'
replay=(--method POST --path /api/v1/transactions/settled --body "$body" "${signed[@]}" --idem cap-replay)
"$load" --url "$api" --seconds 0.3 --conns 1 "${replay[@]}" >/dev/null  # the first settles, the rest replay
measure replay "${replay[@]}"
measure refusal --method POST --path /api/v1/transactions/settled --body "$body" "${signed[@]}" --idem cap-bad \
  --bad-signature --expect 401

# Connections each nginx worker holds to its pod (pools, listeners), idle.
nworkers=$(workers | wc -w)
conns=$(q -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
echo "nginx.workers=$nworkers"
echo "pg.connections_per_worker=$(awk -v c="$conns" -v w="$nworkers" 'BEGIN { printf "%.1f", c / w }')"
echo "pg.max_connections=$(q -c "SHOW max_connections")"

# This disk's fdatasync rate (PostgreSQL's wal_sync_method here) and the
# rate of one Redis (single-threaded) on this machine.
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
fsync_out=$("$pgbin/pg_test_fsync" -s 3 -f "$dir/fsync.test")
echo "disk.fdatasync_per_s=$(awk '/fdatasync/ && /ops\/sec/ { print $2; exit }' <<<"$fsync_out")"
echo "disk.wal_sync_method=$(q -c "SHOW wal_sync_method")"
rb=$(redis-benchmark -h 127.0.0.1 -p "$MR_REDIS_PORT" -c 32 -n 300000 -t get,set -q 2>/dev/null | tr '\r' '\n')
echo "redis.set_per_s=$(sed -n 's/^SET: \([0-9.]*\) requests per second.*/\1/p' <<<"$rb" | tail -1)"
echo "redis.get_per_s=$(sed -n 's/^GET: \([0-9.]*\) requests per second.*/\1/p' <<<"$rb" | tail -1)"

# The catalogue: nkeys more active keys (two per club, the most a club
# may have), a reload, the master's load time (its metric, in ms) and the
# key query's server time.
token=$(cat "$MR_OPS_TOKEN_FILE")
load_s() {  # the master's last catalogue load, from /metrics (ms resolution)
  curl -fsS -H "Authorization: Bearer $token" "$MR_OPS_URL/metrics" |
    sed -n 's/^mr_catalogue_load_duration_seconds \([0-9.e+-]*\).*/\1/p' | head -1
}
"$repo/tools/stack.sh" reload "$dir"
echo "catalogue.load_s_one_key=$(load_s)"
for ((i = 0; i < nkeys; i += 2)); do
  "$MR_MRCTL" club create --ref "cat-$i" --name "Catalogue $i" --earn-rate-bp 100 --currencies GBP >/dev/null
  "$MR_MRCTL" key issue --ref "cat-$i" --env sandbox >/dev/null
  [ $((i + 1)) -ge "$nkeys" ] || "$MR_MRCTL" key issue --ref "cat-$i" --env sandbox >/dev/null
done
"$repo/tools/stack.sh" reload "$dir"
echo "catalogue.keys=$(q -c "SELECT count(*) FROM api_keys WHERE status = 'active'")"
echo "catalogue.load_s=$(load_s)"
# The key query as the master sends it (keys/key_catalogue.cpp), every row
# fetched, one client: pgbench's average latency. (pg_stat_statements does
# not see the master's own: its connection closes with the query's portal
# still open, and an aborted portal is not counted.)
cat > "$dir/catalogue.sql" <<'SQL'
SELECT k.key_id, k.secret_sealed, k.club_id, c.partner_ref, c.pod FROM api_keys k JOIN clubs c USING (club_id) WHERE k.status = 'active' AND c.status = 'active' AND k.environment = 'sandbox';
SQL
cat_out=$(pgbench -n -M prepared -h 127.0.0.1 -p "$MR_PG_PORT" -U postgres -c 1 -T 3 -f "$dir/catalogue.sql" mr 2>&1)
echo "catalogue.query_ms=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$cat_out")"
echo "load_average_after=$(cut -d' ' -f1 /proc/loadavg)"
[ "$failures" = 0 ] || { echo "$failures load(s) FAILED" >&2; exit 1; }
