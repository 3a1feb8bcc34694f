#!/usr/bin/env bash
# bench/pods.sh [--smoke]: the pods lines of bench/run_all.sh (sourced by
# it; run by itself, it is run_all.sh --only pods). Settled POSTs and
# balance reads for two clubs, 16 connections each, with the clubs on two
# pods (the stack's PostgreSQL and a second cluster on this machine, each
# club's key routed to its pod) vs the same load with both clubs on one
# pod, taking turns: on one machine the two clusters share the CPU and
# the disk, so this shows what routing costs, not what scale-out gains.
[ "${BASH_SOURCE[0]}" != "$0" ] || exec "$(dirname "$0")/run_all.sh" --only pods "$@"

# Pod b: a second PostgreSQL cluster on this machine (tools/pod-cluster.sh,
# as the pods tests make theirs, which writes fsync off), given the home
# pod's fsync, synchronous_commit and full_page_writes (durable in a
# full run unless MR_PG_OPTS says otherwise) and checked to match. The
# clubs: pods-a on home, pods-b on pod b, pods-c on home. "One pod" is
# the load on a and c, "two pods" the same load on a and b: one
# directory and the same pools (one per pod per worker) in both, so the
# ratio shows where the load lands and what the split costs: each pod's
# settles batch apart, and the load uses both pods' pools (twice the
# connections); each pod also has its own WAL and fsyncs, which on this
# disk let two pods commit more than one (bench/RESULTS.md, "Pods").
# Both clusters share this machine's cores and disk: this is the cost of
# routing, not what a second pod's own machine would add.
echo "pods (2 clubs x 16 connections, one pod vs two)" >&2
pod_b_dir=$dir/pod-b
pod_b=$("$repo/tools/pod-cluster.sh" up "$pod_b_dir" "$(free_port)")
pq() { psql -XAtq -v ON_ERROR_STOP=1 "$pod_b" "$@"; }
durability="SELECT current_setting('fsync') || ' ' || current_setting('synchronous_commit') || ' ' || current_setting('full_page_writes')"
for setting in fsync synchronous_commit full_page_writes; do
  pq -c "ALTER SYSTEM SET $setting = '$(q -c "SHOW $setting")'"
done
pq -c "SELECT pg_reload_conf()" >/dev/null
deadline=$(( $(date +%s) + 10 ))
while [ "$(pq -c "$durability")" != "$(q -c "$durability")" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
[ "$(pq -c "$durability")" = "$(q -c "$durability")" ] ||
  { echo "FAILED: pod b's fsync/synchronous_commit/full_page_writes ($(pq -c "$durability")) differ from home's ($(q -c "$durability"))" >&2; exit 1; }
"$MR_MRCTL" migrate --dsn "$pod_b" >/dev/null
"$MR_MRCTL" pod add --pod b --conninfo "$pod_b" >/dev/null
declare -A pod_kid pod_secret
for c in a b c; do
  "$MR_MRCTL" club create --ref "pods-$c" --name "Pods $c" --earn-rate-bp 100 --redemption-rate-minor 1 \
    --payout-currency GBP --currencies GBP $([ $c = b ] && echo "--pod b") >/dev/null
  "$MR_MRCTL" pool topup --ref "pods-$c" --points 1000000000000 >/dev/null
  k=$("$MR_MRCTL" key issue --ref "pods-$c" --env sandbox)
  pod_kid[$c]=$(key_field keyId "$k") pod_secret[$c]=$(key_field secret "$k")
  # Members pgb-<conn>-<1..16> for mr_load's 16 connections, in the club's pod.
  members="INSERT INTO members (club_id, external_id, first_name, last_name, email)
    SELECT club_id, 'pgb-' || c || '-' || m, 'B', 'M', 'b@x' FROM clubs, generate_series(0, 15) c, generate_series(1, 16) m
    WHERE partner_ref = 'pods-$c'"
  if [ $c = b ]; then pq -c "$members"; else q -c "$members"; fi
done
"$repo/tools/stack.sh" reload "$dir"
# Each key answers from its pod before anything is timed.
for c in a b c; do
  deadline=$(( $(date +%s) + 30 ))
  until "$MR_BUILD_DIR/tools/mr-sign/mr-sign" --key-id "${pod_kid[$c]}" --secret "${pod_secret[$c]}" --method GET \
          --path /api/v1/members/pgb-0-1/balance --send "$api" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "FAILED: club pods-$c not served after the reload" >&2; exit 1; }
    sleep 0.1
  done
done
# CPU so far of both clusters' processes (ns): per request it is steadier
# than a rate here, as the workers' CPU is.
pods_pg_cpu_ns() { pg_cpu_ns "$MR_PG_DATA" "$pod_b_dir/data"; }
declare -A t_pg
# pair NAME CLUB1 CLUB2 ARGS...: one mr_load per club at once, 16
# connections each, ARGS with @REF@ for the club's ref; sets rate (the
# sum), p50 (the mean of the two), p99 (the larger), failed, cpu_us
# (nginx workers' CPU over both runs' answers) and pg_us (both clusters').
pair() {
  local name=$1 c1=$2 c2=$3 cpu0 cpu1 pg0 pg1 c out f requests=0; shift 3
  cpu0=$(worker_cpu_ns) pg0=$(pods_pg_cpu_ns)
  for c in "$c1" "$c2"; do
    "$load" --seconds "${run_secs:-$secs}" --min-ok "$min_ok" --url "$api" --conns 16 \
      --key "${pod_kid[$c]}" --secret "${pod_secret[$c]}" "${@//@REF@/pods-$c}" >"$dir/pair-$c.out" 2>"$dir/pair-$c.err" &
  done
  wait || true
  cpu1=$(worker_cpu_ns) pg1=$(pods_pg_cpu_ns)
  rate=0 p50=0 p99=0 failed=0
  for c in "$c1" "$c2"; do
    out=$(cat "$dir/pair-$c.out")
    echo "  $name, club pods-$c: $out" >&2
    if [ -z "$(field rate "$out")" ] || [ "$(field failed "$out")" != 0 ] ||
       [ "$(awk -v r="$(field rate "$out")" 'BEGIN { print (r > 0) }')" != 1 ]; then
      echo "FAILED: $name, club pods-$c: ${out:-no output} $(cat "$dir/pair-$c.err")" >&2
      failures=$((failures + 1))
    fi
    rate=$(awk -v a="$rate" -v b="$(field rate "$out")" 'BEGIN { print a + b }')
    p50=$(awk -v a="$p50" -v b="$(field p50_ms "$out")" 'BEGIN { print a + b / 2 }')
    p99=$(awk -v a="$p99" -v b="$(field p99_ms "$out")" 'BEGIN { print (b > a ? b : a) }')
    f=$(field failed "$out"); failed=$(( failed + ${f:-1} ))
    requests=$(( requests + $(field requests "$out") ))
  done
  cpu_us=$(awk -v a="$cpu0" -v b="$cpu1" -v n="$requests" 'BEGIN { printf "%.1f", (n > 0 ? (b - a) / 1000 / n : 0) }')
  pg_us=$(awk -v a="$pg0" -v b="$pg1" -v n="$requests" 'BEGIN { printf "%.1f", (n > 0 ? (b - a) / 1000 / n : 0) }')
  echo "  $name: nginx CPU $cpu_us µs/req, PostgreSQL CPU $pg_us µs/req" >&2
  note_rss
}
pg_tally() { t_pg[$1]=$(awk -v a="${t_pg[$1]:-0}" -v b="$pg_us" -v r="$2" 'BEGIN { print a + b / r }'); }
# Turns as the edge lines take them, and the order swapped every other
# round so that neither layout always runs first on a growing table.
rounds=$(rounds_of 5)
pod_secs=$(awk -v s="$secs" -v r="$rounds" 'BEGIN { print s / r }')
settle_args=(--settle @REF@ --member-prefix pgb-)
read_args=(--method GET --path /api/v1/members/pgb-0-1/balance)
for ((round = 1; round <= rounds; round++)); do
  for layout in $([ $((round % 2)) = 1 ] && echo "one two" || echo "two one"); do
    second=$([ $layout = one ] && echo c || echo b)
    run_secs=$pod_secs pair "settles, $layout pod(s), round $round" a "$second" "${settle_args[@]}"
    tally "settle-$layout" "$rounds"; pg_tally "settle-$layout" "$rounds"
    run_secs=$pod_secs pair "balance reads, $layout pod(s), round $round" a "$second" "${read_args[@]}"
    tally "read-$layout" "$rounds"; pg_tally "read-$layout" "$rounds"
  done
done
# The load landed where the directory says: b's books in pod b only.
books() { "$@" -c "SELECT count(*) FROM transactions JOIN clubs USING (club_id) WHERE partner_ref = '$club_ref'"; }
club_ref=pods-b; in_b=$(books pq); in_home=$(books q)
club_ref=pods-c; c_home=$(books q); c_b=$(books pq)
echo "  settles booked: pods-b in pod b $in_b, in home $in_home; pods-c in home $c_home, in pod b $c_b" >&2
if [ "$in_b" = 0 ] || [ "$in_home" != 0 ] || [ "$c_home" = 0 ] || [ "$c_b" != 0 ]; then
  echo "FAILED: settles not booked in their club's pod" >&2
  failures=$((failures + 1))
fi
pods_row() {  # key label ratio target
  tallied_row "$1" "$2; PostgreSQL CPU $(printf '%.0f' "${t_pg[$1]}") µs/req" "$3" "$4"
}
pods_row settle-one "settled POSTs, 2 clubs x 16 connections, both clubs on one pod (floor)" 1.00 -
pods_row settle-two "settled POSTs, 2 clubs x 16 connections, one club on each of two pods (same machine)" \
  "$(ratio "${t_rate[settle-two]}" "${t_rate[settle-one]}") of one pod" "≥ 0.95"
pods_row read-one "signed GET balance, 2 clubs x 16 connections, both clubs on one pod (floor)" 1.00 -
pods_row read-two "signed GET balance, 2 clubs x 16 connections, one club on each of two pods (same machine)" \
  "$(ratio "${t_rate[read-two]}" "${t_rate[read-one]}") of one pod" "≥ 0.95"
finished+=(pods)
