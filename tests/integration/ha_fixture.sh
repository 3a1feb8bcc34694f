#!/usr/bin/env bash
# ha_fixture.sh up|down <dir>: fixture.sh's stack with Debian's own high
# availability beside it, for the failover tests (MR_HA, read at up):
#   MR_HA=patroni   PostgreSQL run by Patroni: two nodes and one etcd
#                   (tools/patroni-local.sh, synchronous mode), with short
#                   timings (ttl 10 s, loop_wait 1 s, retry_timeout 3 s) so
#                   a lost leader is replaced in about 10 s; the stack's DSN
#                   names both nodes (target_session_attrs=read-write)
#   MR_HA=sentinel  the stack's Redis as the master of one replica, watched
#                   by three Sentinels (quorum 2, down after 1 s); nginx
#                   asks the Sentinels for the master (mr_redis_sentinel)
# The extra servers live in <dir>.ha (fixture.sh empties <dir> at up);
# their addresses go to <dir>/test.env. down stops whatever of them runs.
set -euo pipefail
cmd=${1:?up|down} dir=${2:?dir}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
ha=$dir.ha

# <deadline in s> <command...>: polls until the command succeeds.
wait_for() {
  local until=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$until" ] || { echo "ha_fixture.sh: timed out waiting for: $*" >&2; return 1; }
    sleep 0.1
  done
}

stop_ha() {
  if [ -f "$ha/patroni/ports" ]; then "$repo/tools/patroni-local.sh" down "$ha/patroni" || true; fi
  local pidfile pid
  for pidfile in "$ha"/*/redis.pid; do
    [ -s "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
}

if [ "$cmd" = down ]; then
  "$here/fixture.sh" down "$dir"
  stop_ha
  exit 0
fi

stop_ha
rm -rf "$ha"; mkdir -p "$ha"
taken=()
take_port() { taken+=("$("$repo/tools/free-port.sh" "${taken[@]}")"); echo "${taken[-1]}"; }

case "${MR_HA:?MR_HA=patroni or sentinel}" in
  patroni)
    MR_PATRONI_TTL=10 MR_PATRONI_LOOP_WAIT=1 MR_PATRONI_RETRY_TIMEOUT=3 \
      "$repo/tools/patroni-local.sh" up "$ha/patroni" > "$ha/patroni-up.log"
    MR_PG_DSN=$("$repo/tools/patroni-local.sh" dsn "$ha/patroni") "$here/fixture.sh" up "$dir"
    source "$ha/patroni/ports"
    cat >> "$dir/test.env" <<ENV
MR_PATRONI_DIR='$ha/patroni'
MR_PATRONI_PG1_PORT='$PG1'
MR_PATRONI_PG2_PORT='$PG2'
MR_PATRONI_API1_PORT='$API1'
MR_PATRONI_API2_PORT='$API2'
ENV
    ;;
  sentinel)
    # The Sentinels first, without a master: listening, their ports are
    # not handed out again to the fixture.
    ports=()
    for i in 1 2 3; do
      p=$(take_port); ports+=("$p")
      mkdir -p "$ha/sentinel-$i"
      # Sentinel rewrites its own file: one each, writable.
      printf 'port %s\nbind 127.0.0.1\ndaemonize yes\ndir %s\npidfile %s\nlogfile %s\n' \
        "$p" "$ha/sentinel-$i" "$ha/sentinel-$i/redis.pid" "$ha/sentinel-$i/sentinel.log" > "$ha/sentinel-$i/sentinel.conf"
      redis-sentinel "$ha/sentinel-$i/sentinel.conf"
    done
    for p in "${ports[@]}"; do wait_for 10 redis-cli -p "$p" PING; done
    MR_REDIS_SENTINEL="127.0.0.1:${ports[0]} 127.0.0.1:${ports[1]} 127.0.0.1:${ports[2]} master mr" \
      "$here/fixture.sh" up "$dir"
    source "$dir/stack/stack.env"
    password=$(cat "$MR_REDIS_PASSWORD_FILE")
    replica=$(take_port)
    mkdir -p "$ha/replica"
    (umask 077; {
      printf 'bind 127.0.0.1\nport %s\ndir %s\ndaemonize yes\n' "$replica" "$ha/replica"
      printf 'pidfile %s\nlogfile %s\nsave ""\nappendonly no\n' "$ha/replica/redis.pid" "$ha/replica/redis.log"
      printf 'requirepass %s\nmasterauth %s\nreplicaof 127.0.0.1 %s\n' "$password" "$password" "$MR_REDIS_PORT"
    } > "$ha/replica/redis.conf")
    redis-server "$ha/replica/redis.conf"
    export REDISCLI_AUTH=$password
    replica_up() { redis-cli -p "$replica" INFO replication | grep -q '^master_link_status:up'; }
    wait_for 30 replica_up
    unset REDISCLI_AUTH  # the Sentinels want none
    for p in "${ports[@]}"; do
      redis-cli -p "$p" SENTINEL MONITOR mr 127.0.0.1 "$MR_REDIS_PORT" 2 | grep -qx OK
      redis-cli -p "$p" SENTINEL SET mr auth-pass "$password" down-after-milliseconds 1000 \
        failover-timeout 10000 | grep -qx OK
    done
    # Ready once each Sentinel knows the replica and the two others (their
    # hello messages come every 2 s): a failover needs a majority of them.
    knows_all() {
      [ "$(redis-cli -p "$1" SENTINEL replicas mr | grep -cx name)" -eq 1 ] &&
        [ "$(redis-cli -p "$1" SENTINEL sentinels mr | grep -cx name)" -eq 2 ]
    }
    for p in "${ports[@]}"; do wait_for 60 knows_all "$p"; done
    cat >> "$dir/test.env" <<ENV
MR_HA_DIR='$ha'
MR_SENTINEL_PORTS='${ports[*]}'
MR_REDIS_REPLICA_PORT='$replica'
MR_REDIS_MASTER_NAME='mr'
ENV
    ;;
  *) echo "ha_fixture.sh: MR_HA=patroni or sentinel, not '$MR_HA'" >&2; exit 2 ;;
esac
