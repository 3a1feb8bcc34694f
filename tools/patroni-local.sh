#!/usr/bin/env bash
# patroni-local.sh up|down|status|dsn <dir>
# A highly available PostgreSQL 15 on one machine, for trying failover:
# one etcd and two Patroni-managed PostgreSQL servers (pg1, pg2) on free
# loopback ports, in synchronous mode (a commit waits for the replica, so a
# failover loses no acknowledged write). Everything lives under <dir>.
#   up      start (or reuse) the cluster, create the database mr, print the DSN
#   down    stop Patroni (and with it PostgreSQL) and etcd
#   status  patronictl list
#   dsn     the ledger's DSN: both servers, target_session_attrs=read-write
# Then: MR_PG_DSN="$(tools/patroni-local.sh dsn <dir>)" tools/stack.sh up <stack dir>
# runs Redis and nginx on it. Switch over with
#   patronictl -c <dir>/pg1.yml switchover --leader pg1 --candidate pg2 --force
# Needs the Debian packages patroni, etcd-server and etcd-client.
# MR_PATRONI_TTL [20], MR_PATRONI_LOOP_WAIT [2], MR_PATRONI_RETRY_TIMEOUT [5]:
# Patroni's timings at bootstrap (a lost leader is replaced within about
# ttl); the tests use 10/1/3. Patroni wants ttl >= loop_wait + 2 x retry_timeout.
set -euo pipefail
cmd=${1:?up|down|status|dsn} dir=${2:?dir}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
as_pg() { runuser -u postgres -- "$@"; }

if [ ! -f "$dir/ports" ]; then
  [ "$cmd" = up ] || { echo "no cluster in $dir" >&2; exit 1; }
  # Each port passed back as taken: the probe alone may hand one out twice
  # (nothing listens on them yet).
  taken=()
  for name in ETCD ETCD_PEER PG1 PG2 API1 API2; do
    taken+=("$("$repo/tools/free-port.sh" "${taken[@]}")")
    echo "$name=${taken[-1]}"
  done > "$dir/ports"
fi
source "$dir/ports"
dsn="host=127.0.0.1,127.0.0.1 hostaddr=127.0.0.1,127.0.0.1 port=$PG1,$PG2 target_session_attrs=read-write"
dsn="$dsn dbname=mr user=postgres gssencmode=disable sslmode=disable"
patronictl() { command patronictl -c "$dir/pg1.yml" "$@"; }
running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
# <pid file> <log> <command...>: runs it in the background as postgres, in a
# session of its own; the pid file names the command itself, not runuser.
as_pg_daemon() {
  local pidfile=$1 log=$2; shift 2
  : > "$pidfile"; chown postgres "$pidfile"
  as_pg setsid sh -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" >"$log" 2>&1 < /dev/null &
  for _ in $(seq 50); do [ -s "$pidfile" ] && break; sleep 0.1; done
}

node_config() {  # <name> <pg port> <api port>
  cat <<YAML
scope: mr
name: $1
restapi:
  listen: 127.0.0.1:$3
  connect_address: 127.0.0.1:$3
etcd3:
  hosts: 127.0.0.1:$ETCD
bootstrap:
  dcs:
    ttl: ${MR_PATRONI_TTL:-20}
    loop_wait: ${MR_PATRONI_LOOP_WAIT:-2}
    retry_timeout: ${MR_PATRONI_RETRY_TIMEOUT:-5}
    synchronous_mode: true
    postgresql:
      parameters:
        synchronous_commit: 'on'
        max_connections: 200
  initdb:
    - encoding: UTF8
    - no-locale
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$2
  connect_address: 127.0.0.1:$2
  data_dir: $dir/$1/data
  bin_dir: /usr/lib/postgresql/15/bin
  pgpass: $dir/$1/pgpass
  authentication:
    superuser: {username: postgres}
    replication: {username: postgres}
  parameters:
    unix_socket_directories: $dir/$1
YAML
}

case "$cmd" in
  up)
    chown postgres "$dir"
    if ! running "$dir/etcd.pid"; then
      as_pg_daemon "$dir/etcd.pid" "$dir/etcd.log" etcd --name mr --data-dir "$dir/etcd" \
        --listen-client-urls "http://127.0.0.1:$ETCD" --advertise-client-urls "http://127.0.0.1:$ETCD" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
        --initial-cluster "mr=http://127.0.0.1:$ETCD_PEER"
    fi
    for _ in $(seq 100); do
      ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$ETCD" endpoint health >/dev/null 2>&1 && break; sleep 0.1
    done
    for n in 1 2; do
      name=pg$n pg_var=PG$n api_var=API$n
      mkdir -p "$dir/$name"; chown postgres "$dir/$name"
      node_config "$name" "${!pg_var}" "${!api_var}" > "$dir/$name.yml"
      if ! running "$dir/$name.pid"; then
        as_pg_daemon "$dir/$name.pid" "$dir/$name/patroni.log" patroni "$dir/$name.yml"
      fi
      # pg1 bootstraps the cluster before pg2 joins it as a replica.
      for _ in $(seq 600); do
        patronictl list -f json 2>/dev/null | grep -q "\"Member\": \"$name\", [^}]*\"State\": \"\(running\|streaming\)\"" && break
        sleep 0.1
      done
    done
    # Synchronous mode names the replica once it streams.
    for _ in $(seq 300); do
      patronictl list -f json 2>/dev/null | grep -q '"Role": "Sync Standby"' && break; sleep 0.1
    done
    if ! psql "$dsn dbname=postgres" -XtAc "SELECT 1 FROM pg_database WHERE datname = 'mr'" | grep -q 1; then
      psql "$dsn dbname=postgres" -Xqc "CREATE DATABASE mr"
    fi
    patronictl list
    echo "$dsn"
    ;;
  down)
    for f in pg1 pg2 etcd; do
      if running "$dir/$f.pid"; then
        kill "$(cat "$dir/$f.pid")"
        for _ in $(seq 300); do running "$dir/$f.pid" || break; sleep 0.1; done
      fi
    done
    ;;
  status) patronictl list ;;
  dsn) echo "$dsn" ;;
  *) echo "usage: $0 up|down|status|dsn <dir>" >&2; exit 2 ;;
esac
