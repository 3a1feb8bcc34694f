# bench/writes_lib.sh: what the reversal and redemption lines share
# (bench/reversals.sh, bench/redemptions.sh source it; sourcing it twice
# keeps the tallies). Both are written one by one through mr_write in the
# service (settles alone are batched), against pgbench running the same
# ledger work as plain statements per transaction on the same database,
# as the settle line's floor is written (no idempotency record, no pool
# stripe; the redemption keeps its club row, pgbench_redeem.sql): at 32
# clients, the API's concurrency and the target's floor, and at the
# service's own number of PostgreSQL connections (workers x
# mr_ledger_pool_size), since 32 clients queueing on one row can do less
# than fewer would. A third row runs the service's own SQL, SELECT
# mr_write(...) as the module sends it, from pgbench at that number of
# connections: the API's distance from it is what the module adds. They
# take turns, a slice each per round, as the balance lines do; each row
# shows PostgreSQL's CPU per transaction.
w_rounds=$(rounds_of 3)
w_slice=$(( secs / w_rounds > 0 ? secs / w_rounds : 1 ))  # pgbench -T takes whole seconds
svc_conns=$(( $(sed -n 's/^ *worker_processes \([0-9]*\);.*/\1/p' "$dir/nginx/nginx.conf") *
              $(sed -n 's/^ *mr_ledger_pool_size \([0-9]*\);.*/\1/p' "$dir/nginx/nginx.conf") ))
declare -A t_pgcpu
# w_turn KEY CLIENTS NAME ARGS...: one timed slice, tallied under KEY with
# PostgreSQL's CPU per transaction: pgbench with CLIENTS clients and ARGS
# (script first), or, CLIENTS "api", mr_load's 32 connections with ARGS.
w_turn() {
  local key=$1 clients=$2 name=$3 pg0; shift 3
  pg0=$(pg_cpu_ns)
  if [ "$clients" = api ]; then
    run_secs=$w_slice http "$name" --url "$api" --conns 32 "${signed[@]}" "$@"
  else
    secs=$w_slice pg "$name" "$clients" "$@"
  fi
  t_pgcpu[$key]=$(awk -v a="${t_pgcpu[$key]:-0}" -v b="$(pg_cpu_ns)" -v c="$pg0" -v n="$(awk -v r="$rate" -v s="$w_slice" 'BEGIN { print r * s }')" \
    -v r="$w_rounds" 'BEGIN { print a + (n > 0 ? (b - c) / 1000 / n : 0) / r }')
  tally "$key" "$w_rounds"
}
# pg_cpu KEY: PostgreSQL's CPU per transaction of a tallied line, µs.
pg_cpu() { printf '%.0f' "${t_pgcpu[$1]}"; }
w_rows() {  # what ("reversal"/"redemption") script api-label op: keys <what>-floor, -pool, -fn, -api
  local f=$1-floor p=$1-pool a=$1-api fn=$1-fn
  pg_tallied_row "$f" "pgbench -M prepared per-transaction $1 as plain SQL ($2), 32 clients (floor); PostgreSQL CPU $(pg_cpu "$f") µs/tx" \
    "1.00"
  pg_tallied_row "$p" "the same, $svc_conns clients (the service's PostgreSQL connections); PostgreSQL CPU $(pg_cpu "$p") µs/tx" \
    "$(ratio "${t_rate[$p]}" "${t_rate[$f]}") of floor"
  pg_tallied_row "$fn" "pgbench SELECT mr_write('$4', ...) as the module sends it, $svc_conns clients (the service's SQL, no HTTP); PostgreSQL CPU $(pg_cpu "$fn") µs/tx" \
    "$(ratio "${t_rate[$fn]}" "${t_rate[$f]}") of floor"
  tallied_row "$a" "$3, 32 connections; PostgreSQL CPU $(pg_cpu "$a") µs/req" \
    "$(ratio "${t_rate[$a]}" "${t_rate[$f]}") of floor ($(ratio "${t_rate[$a]}" "${t_rate[$p]}") of $svc_conns clients, $(ratio "${t_rate[$a]}" "${t_rate[$fn]}") of mr_write)" "≥ 1.0"
}
