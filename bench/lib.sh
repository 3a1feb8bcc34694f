# bench/lib.sh: what every benchmark shares, sourced by bench/run_all.sh
# and bench/capacity_measure.sh (never run): a stack of the bench's own on
# ports from tools/free-port.sh, the bench club seeded in it, the CPU
# readings of nginx, PostgreSQL and the machine from /proc, one timed run
# of mr_load or pgbench, and the table's rows. Expects `repo` and
# MR_BUILD_DIR set, and bash's `set -euo pipefail`.

load=$MR_BUILD_DIR/bench/mr_load
[ -x "$load" ] || { echo "run tools/build.sh first ($load missing)" >&2; exit 1; }

# --- the stack ----------------------------------------------------------
# Ports come from the machine-wide reservation: stacks of tests or of other
# checkouts started at the same moment never pick the same one.
free_port() { "$repo/tools/free-port.sh" "$@"; }

# bench_stack_dir NAME: a folder for the stack under the build dir ($dir),
# removed with everything in it at exit, and the stack's ports exported.
# The benchmarks' own servers (a pod's cluster, a webhook receiver) set
# pod_b_dir and recv_dir, and are stopped with it.
bench_stack_dir() {
  dir=$(mktemp -d "$MR_BUILD_DIR/$1-stack.XXXX"); chmod 755 "$dir"  # PostgreSQL runs as postgres
  pod_b_dir= recv_dir=
  trap cleanup EXIT
  export MR_PORT=$(free_port) MR_PG_PORT=$(free_port) MR_REDIS_PORT=$(free_port) MR_OPS_PORT=$(free_port)
}
cleanup() {
  [ -z "$recv_dir" ] || kill "$(cat "$recv_dir/logs/nginx.pid")" 2>/dev/null || true
  [ -z "$pod_b_dir" ] || "$repo/tools/pod-cluster.sh" down "$pod_b_dir" >/dev/null 2>&1 || true
  "$repo/tools/stack.sh" down "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}

q() { psql -XAtq -v ON_ERROR_STOP=1 "$MR_DSN" "$@"; }
# key_field NAME JSON: one string field of `mrctl key issue`'s answer.
key_field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" <<<"$2"; }

# bench_stack_start: the stack up in $dir (with whatever the caller put in
# its nginx/conf.d), its addresses sourced, and the club `bench` with a
# funded pool and a sandbox key ($kid, $secret, $club). Members
# pgb-<client>-<1..16>: client c of mr_load and of pgbench (which numbers
# its clients from 0) use the same 16 members; member `small` has 10
# history entries.
bench_stack_start() {
  local keyjson
  "$repo/tools/stack.sh" up "$dir" >/dev/null
  source "$dir/stack.env"
  export MR_DSN MR_MASTER_KEY_FILE
  api=$MR_BASE_URL ops=$MR_OPS_URL
  "$MR_MRCTL" club create --ref bench --name Bench --earn-rate-bp 100 --redemption-rate-minor 1 \
    --payout-currency GBP --currencies GBP >/dev/null
  "$MR_MRCTL" pool topup --ref bench --points 1000000000000 >/dev/null
  keyjson=$("$MR_MRCTL" key issue --ref bench --env sandbox)
  "$repo/tools/stack.sh" reload "$dir"
  kid=$(key_field keyId "$keyjson") secret=$(key_field secret "$keyjson")
  signed=(--key "$kid" --secret "$secret")
  club=$(q -c "SELECT club_id FROM clubs WHERE partner_ref = 'bench'")
  q -c "INSERT INTO members (club_id, external_id, first_name, last_name, email)
        SELECT $club, 'pgb-' || c || '-' || m, 'B', 'M', 'b@x' FROM generate_series(0, 31) c, generate_series(1, 16) m"
  q -v club="$club" -v member=small -v n=10 -f "$repo/bench/seed_history.sql" >/dev/null
}

# --- CPU and memory, from /proc -----------------------------------------
tick_ns=$((1000000000 / $(getconf CLK_TCK)))
children_of() { cat "/proc/$1/task/$1/children" 2>/dev/null || true; }
# cpu_ticks PID: user + system time of a running process (fields 14 and 15
# of stat, counted after the ")" that ends the name); 0 once it is gone.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }' || echo 0; }
# children_ticks PID: CPU time so far of a process's running children.
children_ticks() {
  local total=0 p
  for p in $(children_of "$1"); do total=$((total + $(cpu_ticks "$p"))); done
  echo "$total"
}
children_cpu_ns() { echo $(( $(children_ticks "$1") * tick_ns )); }
nginx_master() { cat "$dir/nginx/logs/nginx.pid" 2>/dev/null || true; }
workers() { children_of "$(nginx_master)"; }  # pids of the nginx workers (no procps needed)
worker_cpu_ns() { children_cpu_ns "$(nginx_master)"; }  # CPU of all nginx workers so far, ns
# The whole machine's busy CPU time so far (every core: /proc/stat's user,
# nice, system, irq, softirq and steal), ns.
machine_cpu_ns() {
  awk -v t="$tick_ns" '$1 == "cpu" { printf "%.0f\n", ($2 + $3 + $4 + $7 + $8 + $9) * t; exit }' /proc/stat
}
# pg_cpu_ns [DATADIR...]: CPU time of PostgreSQL clusters so far, ns (the
# stack's when none is named): each postmaster's own and its reaped
# children's (fields 14-17 of stat), and each running child's.
pg_cpu_ns() {
  local total=0 pm
  for pm in $(for d in "${@:-$MR_PG_DATA}"; do head -1 "$d/postmaster.pid"; done); do
    total=$((total + $(sed 's/.*) //' "/proc/$pm/stat" | awk '{ print $12 + $13 + $14 + $15 }') + $(children_ticks "$pm")))
  done
  echo $((total * tick_ns))
}
# The largest RSS of any nginx worker: each worker's own peak (VmHWM),
# read after every line. (A loop sampling VmRSS every 0.2 s would take its
# own share of the machine's CPU from every line measured.)
rss_kb=0
note_rss() {
  local p key value _
  for p in $(workers); do
    while read -r key value _; do
      [ "$key" = VmHWM: ] && [ "$value" -gt "$rss_kb" ] && rss_kb=$value
    done < "/proc/$p/status" 2>/dev/null || true
  done
}

# --- one run ------------------------------------------------------------
failures=0
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
# http NAME ARGS...: one mr_load run; sets rate, p50, p99, failed.
# cpu_us: nginx workers' CPU time per answered request (/proc/<pid>/stat),
# steadier than rates on a shared machine. run_secs overrides $secs.
http() {
  local name=$1 out cpu0 cpu1; shift
  cpu0=$(worker_cpu_ns)
  # A few answers a line however slow (5 in smoke runs, 20 in full ones):
  # a rate, never a zero by chance.
  out=$("$load" --seconds "${run_secs:-$secs}" --min-ok "$min_ok" "$@" 2>"$dir/load.err") || true
  cpu1=$(worker_cpu_ns)
  rate=$(field rate "$out") p50=$(field p50_ms "$out") p99=$(field p99_ms "$out") failed=$(field failed "$out")
  cpu_us=$(awk -v a="$cpu0" -v b="$cpu1" -v n="$(field requests "$out")" 'BEGIN { printf "%.1f", (n > 0 ? (b - a) / 1000 / n : 0) }')
  if [ -z "$rate" ] || [ "${failed:-1}" != 0 ] || [ "$(awk -v r="$rate" 'BEGIN { print (r > 0) }')" != 1 ]; then
    echo "FAILED: $name: ${out:-no output} $(cat "$dir/load.err")" >&2
    failures=$((failures + 1)) rate=${rate:-0} failed=${failed:-?}
  fi
  echo "  $name: $out" >&2
  note_rss
}
# pg NAME CLIENTS SCRIPT [pgbench args]: one pgbench run; sets rate, p50
# (average latency). SCRIPT is a path, or a file in bench/.
pg() {
  local name=$1 clients=$2 script=$3 out; shift 3
  out=$(pgbench -n -M prepared -h 127.0.0.1 -p "$MR_PG_PORT" -U postgres -c "$clients" -j 2 -T "$secs" \
          -f "$([[ $script = /* ]] && echo "$script" || echo "$repo/bench/$script")" "$@" mr 2>&1) || true
  rate=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
  rate=${rate:+$(printf '%.1f' "$rate")}
  p50=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' <<<"$out") p99=- failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
  # An aborted client (a script's \gset found no row) is a failure too.
  if [ -z "$rate" ] || ! grep -q '^number of transactions actually processed' <<<"$out" || [ "${failed:-0}" != 0 ] ||
     grep -q 'aborted' <<<"$out"; then
    echo "FAILED: $name: $out" >&2
    failures=$((failures + 1)) rate=${rate:-0}
  fi
  failed=${failed:-0}
  echo "  $name: tps=$rate latency_avg_ms=$p50" >&2
}
# timed NAME COMMAND...: wall seconds of one run; sets secs_taken.
timed() {
  local name=$1 start; shift
  start=$(date +%s.%N)
  if ! "$@" >/dev/null 2>"$dir/timed.err"; then
    echo "FAILED: $name: $(head -5 "$dir/timed.err")" >&2
    failures=$((failures + 1))
  fi
  secs_taken=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
  echo "  $name: ${secs_taken}s" >&2
}
# rounds_of DEFAULT: how many rounds lines that take turns run (one in a
# smoke run; MR_BENCH_ROUNDS, else DEFAULT, in a full one).
rounds_of() { [ "$smoke" = 1 ] && echo 1 || echo "${MR_BENCH_ROUNDS:-$1}"; }

# --- the table ----------------------------------------------------------
rows=()
finished=()  # the sections that ran to their end
# row line rate p50 p99 failed nginx-µs/req ratio target
row() { rows+=("$(printf '| %s | %s | %s | %s | %s | %s | %s | %s |' "$@")"); }
# Three decimals: at two, 0.898 printed as 0.90 beside a target of 0.9.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }
# Lines that take turns over rounds: tally KEY ROUNDS adds the last run
# (rate, p50, p99, cpu_us, failed) to the line KEY: rate, p50 and CPU
# averaged over the rounds, the worst p99, failures summed.
declare -A t_rate t_p50 t_p99 t_cpu t_failed
tally() {
  local k=$1 n=$2
  t_rate[$k]=$(awk -v a="${t_rate[$k]:-0}" -v b="$rate" -v r="$n" 'BEGIN { print a + b / r }')
  t_p50[$k]=$(awk -v a="${t_p50[$k]:-0}" -v b="$p50" -v r="$n" 'BEGIN { print a + b / r }')
  t_p99[$k]=$(awk -v a="${t_p99[$k]:-0}" -v b="$p99" 'BEGIN { print (b > a ? b : a) }')
  t_cpu[$k]=$(awk -v a="${t_cpu[$k]:-0}" -v b="${cpu_us:-0}" -v r="$n" 'BEGIN { print a + b / r }')
  t_failed[$k]=$(( ${t_failed[$k]:-0} + failed ))
}
# tallied_row KEY LABEL RATIO TARGET: the row of a tallied line.
tallied_row() {
  row "$2" "$(printf '%.1f' "${t_rate[$1]}")" "$(printf '%.3f' "${t_p50[$1]}")" "${t_p99[$1]}" "${t_failed[$1]}" \
      "$(printf '%.1f' "${t_cpu[$1]}")" "$3" "$4"
}
# pg_tallied_row KEY LABEL RATIO: the row of a tallied pgbench line
# (average latency, no p99, no nginx, no target).
pg_tallied_row() {
  row "$2" "$(printf '%.1f' "${t_rate[$1]}")" "$(printf '%.3f' "${t_p50[$1]}") (avg)" - "${t_failed[$1]}" - "$3" -
}
# last_row LABEL RATIO TARGET: the row of the last http run.
last_row() { row "$1" "$rate" "$p50" "$p99" "$failed" "$cpu_us" "$2" "$3"; }
# pg_row LABEL RATIO: the row of the last pgbench run.
pg_row() { row "$1" "$rate" "$p50 (avg)" - "$failed" - "$2" -; }
