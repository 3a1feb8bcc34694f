#!/usr/bin/env bash
# pod-cluster.sh up|stop|start|down <dir> [port]: a bare PostgreSQL cluster
# (initdb, trust on loopback) with an empty database "mr", for a second pod
# (the pods tests and the pods benchmark); `up` prints its conninfo. stop
# is immediate (a lost primary).
set -euo pipefail
cmd=${1:?up|stop|start|down} dir=${2:?dir}
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_pg() { runuser -u postgres -- "$@"; }
case "$cmd" in
  up)
    port=${3:?port}
    mkdir -p "$dir"; chown postgres "$dir"
    as_pg "$pgbin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-locale >"$dir/initdb.log"
    cat >> "$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 100
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
    as_pg "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null
    as_pg psql -h 127.0.0.1 -p "$port" -U postgres -Xqc "CREATE DATABASE mr" >/dev/null
    echo "hostaddr=127.0.0.1 port=$port dbname=mr user=postgres"
    ;;
  stop) as_pg "$pgbin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null ;;
  start) as_pg "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null ;;
  down)
    [ -d "$dir/data" ] && { as_pg "$pgbin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; }
    rm -rf "$dir"
    ;;
  *) echo "pod-cluster.sh: up|stop|start|down <dir> [port]" >&2; exit 2 ;;
esac
