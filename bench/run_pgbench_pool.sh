#!/usr/bin/env bash
# run_pgbench_pool.sh [clients] [seconds]
# The pool design measured in PostgreSQL alone (no nginx): for distinct
# members of one club, (1) an award that also updates the club row (one hot
# pool row), (2) the same award without any club row, (3) the ledger's own
# SELECT mr_write('settle', ...) with the pool in stripes. Then an exactness
# run: clients race for a pool that covers exactly 500 awards; exactly 500
# must be made, the pool must end at 0 and the audit must be silent.
# Needs a running PostgreSQL 15 reachable with PGHOST/PGPORT/PGUSER (trust or
# PGPASSWORD) whose user may create databases; uses database mr_pgbench
# (dropped and recreated). Not a test: the rates vary by machine.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
conc=${1:-8} secs=${2:-20} db=mr_pgbench
q() { psql -XAtq -v ON_ERROR_STOP=1 -d "$db" "$@"; }
psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
for f in "$repo"/ledger/sql/migrations/*.sql; do q -1 -f "$f"; done

# pgbench numbers clients from 0: members pgb-0-1 .. pgb-<conc-1>-16.
club() {
  local id
  id=$(q -c "INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES ('$1', 'Bench', 100, '{GBP}')
             RETURNING club_id")
  q -c "INSERT INTO members (club_id, external_id, first_name, last_name, email)
        SELECT $id, 'pgb-' || c || '-' || m, 'B', 'M', 'b@x' FROM generate_series(0, $conc - 1) c, generate_series(1, 16) m"
  q -c "SELECT mr_pool_topup('$1', $2)" >/dev/null
  echo "$id"
}
bench() {  # script club -> tps; a client that aborts fails the run
  local out
  out=$(pgbench -n -c "$conc" -j 2 -T "$secs" -D club="$2" -f "$repo/bench/$1" "$db" 2>&1) || { echo "$out" >&2; exit 1; }
  sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out"
}

c1=$(club bench-row 1000000000000)
q -c "UPDATE clubs SET funded_points = 1000000000000 WHERE club_id = $c1"
q -c "CHECKPOINT"
row=$(bench pgbench_award_club_row.sql "$c1")
echo "award + club row update:  $row tps"
q -c "CHECKPOINT"
none=$(bench pgbench_award_no_club.sql "$c1")
echo "award, no club row:       $none tps"
c2=$(club bench-stripes 1000000000000)
q -c "CHECKPOINT"
fn=$(bench pgbench_settle_fn.sql "$c2")
echo "mr_write settle, stripes: $fn tps"
awk -v r="$row" -v n="$none" -v f="$fn" \
  'BEGIN { printf "club row / no club row = %.2f, mr_write / no club row = %.2f\n", r / n, f / n }'

# Exactness: 5000 points cover exactly 500 awards of 10; every client tries 100.
c3=$(club bench-exact 5000)
pgbench -n -c "$conc" -j 2 -t 100 -D club="$c3" -f "$repo/bench/pgbench_settle_fn.sql" "$db" >/dev/null 2>&1
made=$(q -c "SELECT count(*) FROM transactions WHERE club_id = $c3")
pool=$(q -c "SELECT mr_pool_total($c3)")
refused=$(q -c "SELECT count(*) FROM idempotency_records WHERE club_id = $c3
                AND result->>'outcome' = 'insufficient_partner_points_pool'")
audit=$(q -c "SELECT count(*) FROM mr_audit() a WHERE a LIKE '%club bench-exact%'")
echo "exactness: $((conc * 100)) tries, $made awards, $refused refused, pool left $pool, audit differences $audit"
[ "$made" = 500 ] && [ "$pool" = 0 ] && [ "$refused" = $((conc * 100 - 500)) ] && [ "$audit" = 0 ] || { echo "exactness FAILED" >&2; exit 1; }
