#!/usr/bin/env bash
# stack.sh up|down|reload|status <dir>
# Runs the whole service under <dir>: its own PostgreSQL cluster (initdb),
# Redis and nginx with the built modules, all on loopback. Used by the run
# command (tools/run.sh) and by the integration tests (one stack per run).
#
# Environment (defaults in brackets):
#   MR_BUILD_DIR [<repo>/build]   where cmake built the modules and tools (kept
#                                 from `up`); a sanitizer build's <build>/nginx-preload
#                                 is LD_PRELOADed into nginx, and into nothing else
#   MR_PORT [8080] MR_PG_PORT [15432] MR_REDIS_PORT [16379]
#   MR_ENVIRONMENT [sandbox]      mr_environment of the nginx server; kept
#   MR_PG_OPTS []                 extra postgres -c options (tests: fsync=off)
#   MR_RATE_LIMIT [100r/s] MR_RATE_BURST [200]   per-key limit_req (verified requests)
#   MR_REFUSED_RATE [10r/s] MR_REFUSED_BURST [50]  per-address limit_req (refused requests)
#   MR_OPS_PORT [8081]            the ops listener
#   MR_REDIS_PASSWORD []          at the first `up`: Redis requires it (requirepass) and
#                                 nginx authenticates (mr_redis_password_file); kept after
#   MR_PAYOUT_SIMULATOR [off] MR_PAYOUT_SIMULATOR_DELAY [5s]   sandbox payouts settle by
#                                 themselves (read at every up/reload, not kept)
#   MR_TEST_HELPERS [off]         mr_test_helpers of the nginx server (sandbox only): partners
#                                 settle their own payouts (POST /api/v1/test-helpers/...); kept
#   MR_WEBHOOK_SCHEDULE [0 5s 5m 30m 2h 5h 10h 10h] MR_WEBHOOK_TIMEOUT [15s] MR_WEBHOOK_POLL [5s]
#                                 webhook delivery's waits (the tests shorten them); kept
#                                 from `up` in <dir>/webhook.env
#   MR_PG_STANDBY_PORT []         also run a synchronous streaming standby (<dir>/pg-standby,
#                                 made with pg_basebackup) on this port; the DSN then names
#                                 both servers with target_session_attrs=read-write
#   MR_PG_DSN []                  use this PostgreSQL (its database must exist: e.g. the
#                                 Patroni cluster of tools/patroni-local.sh) instead of
#                                 starting one; kept in <dir>/pg.dsn
#   MR_REDIS_SENTINEL []          "<ip:port>... master <name>": nginx asks these Redis Sentinels
#                                 for the master (mr_redis_sentinel) instead of using the
#                                 stack's Redis port, which stays the first master; kept in
#                                 <dir>/redis.sentinel (tests/integration/ha_fixture.sh)
#   MR_NODE_OF []                 another stack's dir: run only nginx, on that stack's
#                                 PostgreSQL, Redis, master key and ops token (a second node)
# Writes <dir>/stack.env with the addresses, for scripts and tests to source.
set -euo pipefail
cmd=${1:?up|down|reload|status} dir=${2:?stack dir}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
# Ports and build chosen at `up` are kept, so reload/down/status need no environment,
# and `up` again (bringing back a stopped part) needs none either: there the
# environment wins over what was kept, except for a PostgreSQL cluster that
# exists: it listens where its postgresql.conf says (written at initdb), so
# its kept port stays whatever the caller's shell exported.
if [ -f "$dir/ports" ]; then
  if [ "$cmd" = up ]; then
    eval "$(sed -n "s/^\(MR_[A-Z_]*\)=\(.*\)$/: \"\${\1:=\2}\"/p" "$dir/ports")"
    if [ -s "$dir/pg/data/PG_VERSION" ]; then eval "$(grep '^MR_PG_PORT=' "$dir/ports")"; fi
    if [ -s "$dir/pg-standby/data/PG_VERSION" ]; then eval "$(grep '^MR_PG_STANDBY_PORT=' "$dir/ports")"; fi
  else
    source "$dir/ports"
  fi
fi
build=${MR_BUILD_DIR:-$repo/build}
port=${MR_PORT:-8080} pg_port=${MR_PG_PORT:-15432} redis_port=${MR_REDIS_PORT:-16379}
ops_port=${MR_OPS_PORT:-8081}
standby_port=${MR_PG_STANDBY_PORT:-} node_of=${MR_NODE_OF:-}
[ "$cmd" = up ] && printf 'MR_PORT=%s\nMR_PG_PORT=%s\nMR_REDIS_PORT=%s\nMR_OPS_PORT=%s\nMR_RATE_LIMIT=%s\nMR_RATE_BURST=%s\nMR_REFUSED_RATE=%s\nMR_REFUSED_BURST=%s\nMR_PG_STANDBY_PORT=%s\nMR_NODE_OF=%s\nMR_BUILD_DIR=%q\nMR_TEST_HELPERS=%s\nMR_ENVIRONMENT=%s\n' \
  "$port" "$pg_port" "$redis_port" "$ops_port" "${MR_RATE_LIMIT:-100r/s}" "${MR_RATE_BURST:-200}" \
  "${MR_REFUSED_RATE:-10r/s}" "${MR_REFUSED_BURST:-50}" "$standby_port" "$node_of" "$build" \
  "${MR_TEST_HELPERS:-off}" "${MR_ENVIRONMENT:-sandbox}" > "$dir/ports"
# Webhook delivery's waits: as kept, except that the environment of `up` wins.
if [ -f "$dir/webhook.env" ]; then
  while IFS='=' read -r name value; do
    if [ "$cmd" != up ] || [ -z "${!name:-}" ]; then printf -v "$name" %s "$value"; fi
  done < "$dir/webhook.env"
fi
[ "$cmd" = up ] && printf 'MR_WEBHOOK_SCHEDULE=%s\nMR_WEBHOOK_TIMEOUT=%s\nMR_WEBHOOK_POLL=%s\n' \
  "${MR_WEBHOOK_SCHEDULE:-0 5s 5m 30m 2h 5h 10h 10h}" "${MR_WEBHOOK_TIMEOUT:-15s}" "${MR_WEBHOOK_POLL:-5s}" \
  > "$dir/webhook.env"
env_name=${MR_ENVIRONMENT:-sandbox}
pgbin=/usr/lib/postgresql/15/bin
if [ -n "$standby_port" ]; then
  # libpq tries the hosts in order and keeps the first that accepts writes.
  # The standby comes first, so that every connect also walks past a
  # read-only server to the next host (the socket changes under the pool).
  dsn="host=127.0.0.1,127.0.0.1 hostaddr=127.0.0.1,127.0.0.1 port=$standby_port,$pg_port target_session_attrs=read-write"
else
  dsn="host=127.0.0.1 hostaddr=127.0.0.1 port=$pg_port"
fi
dsn="$dsn dbname=mr user=postgres gssencmode=disable sslmode=disable"
[ "$cmd" = up ] && [ -n "${MR_PG_DSN:-}" ] && printf '%s\n' "$MR_PG_DSN" > "$dir/pg.dsn"
[ -s "$dir/pg.dsn" ] && dsn=$(cat "$dir/pg.dsn")
[ "$cmd" = up ] && [ -n "${MR_REDIS_SENTINEL:-}" ] && printf '%s\n' "$MR_REDIS_SENTINEL" > "$dir/redis.sentinel"
master_key=$dir/master.key ops_token=$dir/ops.token redis_password_file=$dir/redis.password
if [ -n "$node_of" ]; then
  # A second node: everything but nginx belongs to the other stack.
  eval "$(sed -n 's/^MR_\(DSN\|REDIS_PORT\|REDIS_PASSWORD_FILE\|MASTER_KEY_FILE\|OPS_TOKEN_FILE\)=/of_&/p' "$node_of/stack.env")"
  redis_port=$of_MR_REDIS_PORT master_key=$of_MR_MASTER_KEY_FILE ops_token=$of_MR_OPS_TOKEN_FILE
  redis_password_file=$of_MR_REDIS_PASSWORD_FILE
  [ -s "$dir/pg.dsn" ] || dsn=$of_MR_DSN  # MR_PG_DSN may name the servers otherwise
fi
mrctl="$build/tools/mrctl/mrctl"
as_pg() { runuser -u postgres -- "$@"; }

pg_start() {  # <data dir> <log>
  if ! as_pg "$pgbin/pg_ctl" -D "$1" status >/dev/null 2>&1; then
    as_pg "$pgbin/pg_ctl" -D "$1" -l "$2" -w -t 60 -o "${MR_PG_OPTS:-}" start >/dev/null
  fi
}

psql_primary() { as_pg psql -h 127.0.0.1 -p "$pg_port" -U postgres -X "$@"; }

pg_up() {
  if [ -n "$standby_port" ] && [ -s "$dir/pg-standby/data/PG_VERSION" ] && [ ! -f "$dir/pg-standby/data/standby.signal" ]; then
    # Two primaries would each take writes the other never sees.
    echo "stack.sh: the standby was promoted; rebuild $dir/pg as its standby (or remove the stack) first" >&2
    exit 1
  fi
  mkdir -p "$dir/pg"; chown postgres "$dir/pg"
  if [ ! -s "$dir/pg/data/PG_VERSION" ]; then
    as_pg "$pgbin/initdb" -D "$dir/pg/data" -A trust -U postgres -E UTF8 --no-locale >"$dir/pg/initdb.log"
    # In the cluster's own configuration, so that any later start (a test
    # restarting PostgreSQL, say) listens where the stack expects it.
    cat >> "$dir/pg/data/postgresql.conf" <<PGCONF
port = $pg_port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir/pg'
max_connections = 200
PGCONF
  fi
  pg_start "$dir/pg/data" "$dir/pg/postgres.log"
  # A server that is running may not take connections yet (just restarted,
  # or restarting after a crash: the chaos test's `up` once found it so and
  # read "connection refused" as "no database mr"). Wait for it, up to 30 s.
  for _ in $(seq 300); do psql_primary -tAc "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done
  [ -n "$standby_port" ] && standby_up
  if ! psql_primary -tAc "SELECT 1 FROM pg_database WHERE datname='mr'" | grep -q 1; then
    # remote_apply: the standby has replayed it before anyone connects. The
    # DSN names the standby first, and libpq does not move to the next host
    # after a server's refusal such as 'database "mr" does not exist'.
    psql_primary -qc "SET synchronous_commit = remote_apply" -c "CREATE DATABASE mr" >/dev/null
  fi
}

# A streaming standby that every commit waits for (synchronous_commit=on
# with synchronous_standby_names): a write acknowledged by the primary is on
# the standby too, so promoting it loses no acknowledged award.
standby_up() {
  local sb=$dir/pg-standby
  mkdir -p "$sb"; chown postgres "$sb"
  if [ ! -s "$sb/data/PG_VERSION" ]; then
    as_pg "$pgbin/pg_basebackup" -h 127.0.0.1 -p "$pg_port" -U postgres -D "$sb/data" -X stream -R
    # Later lines win: its own port and socket folder, and a name that the
    # primary's synchronous_standby_names waits for. The primary's ALTER
    # SYSTEM comes after the copy, so a promoted standby waits for nobody.
    cat >> "$sb/data/postgresql.conf" <<PGCONF
port = $standby_port
unix_socket_directories = '$sb'
PGCONF
    echo "primary_conninfo = 'host=127.0.0.1 port=$pg_port user=postgres application_name=standby'" \
      | as_pg tee -a "$sb/data/postgresql.auto.conf" >/dev/null
  fi
  pg_start "$sb/data" "$sb/postgres.log"
  if [ -f "$sb/data/standby.signal" ]; then
    psql_primary -qc "ALTER SYSTEM SET synchronous_standby_names = 'standby'" -c "SELECT pg_reload_conf()" >/dev/null
  fi
}

# redis-cli with the stack's password, if it has one (REDISCLI_AUTH keeps it
# off the command line).
rcli() {
  if [ -s "$redis_password_file" ]; then
    REDISCLI_AUTH=$(cat "$redis_password_file") redis-cli -h 127.0.0.1 -p "$redis_port" "$@"
  else
    redis-cli -h 127.0.0.1 -p "$redis_port" "$@"
  fi
}

redis_up() {
  mkdir -p "$dir/redis"
  if [ -n "${MR_REDIS_PASSWORD:-}" ] && [ ! -s "$redis_password_file" ]; then
    (umask 077; printf '%s\n' "$MR_REDIS_PASSWORD" > "$redis_password_file")
  fi
  # One configuration file, so a test that restarts Redis starts the same one.
  (umask 077; {
    printf 'bind 127.0.0.1\nport %s\ndir %s\ndaemonize yes\n' "$redis_port" "$dir/redis"
    printf 'pidfile %s\nlogfile %s\nsave ""\nappendonly no\n' "$dir/redis/redis.pid" "$dir/redis/redis.log"
    if [ -s "$redis_password_file" ]; then printf 'requirepass %s\n' "$(cat "$redis_password_file")"; fi
  } > "$dir/redis/redis.conf")
  if ! rcli ping >/dev/null 2>&1; then
    redis-server "$dir/redis/redis.conf" >/dev/null
    for _ in $(seq 50); do rcli ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
}

render_nginx_conf() {
  local ngx="$dir/nginx" redis="s|@REDIS@|127.0.0.1:$redis_port|"
  if [ -s "$dir/redis.sentinel" ]; then
    grep -q '^ *mr_redis @REDIS@;' "$repo/conf/nginx.dev.conf.in" ||
      { echo "stack.sh: conf/nginx.dev.conf.in has no 'mr_redis @REDIS@;' line to replace" >&2; exit 1; }
    redis="s|mr_redis @REDIS@;|mr_redis_sentinel $(cat "$dir/redis.sentinel");|"
  fi
  mkdir -p "$ngx/logs" "$ngx/tmp" "$ngx/modules"
  "$repo/tools/install-modules.sh" "$build/nginx-modules" "$ngx/modules"
  rm -rf "$ngx/snippets.new"; cp -r "$repo/conf/snippets" "$ngx/snippets.new"
  rm -rf "$ngx/snippets"; mv "$ngx/snippets.new" "$ngx/snippets"
  sed -e "s|@MODULES_CONF@|$ngx/modules/load_modules.conf|" \
      -e "s|@ENVIRONMENT@|$env_name|" -e "s|@DSN@|$dsn|" \
      -e "s|@MASTER_KEY_FILE@|$master_key|" -e "s|@PORT@|$port|" \
      -e "$redis" -e "s|@CONF_DIR@|$ngx|" \
      -e "s|@RATE_LIMIT@|${MR_RATE_LIMIT:-100r/s}|" -e "s|@RATE_BURST@|${MR_RATE_BURST:-200}|" \
      -e "s|@REFUSED_RATE@|${MR_REFUSED_RATE:-10r/s}|" -e "s|@REFUSED_BURST@|${MR_REFUSED_BURST:-50}|" \
      -e "s|@OPS_PORT@|$ops_port|" -e "s|@OPS_TOKEN_FILE@|$ops_token|" \
      -e "s|@REDIS_AUTH@|$([ -s "$redis_password_file" ] && echo "mr_redis_password_file $redis_password_file;")|" \
      -e "s|@PAYOUT_SIMULATOR@|${MR_PAYOUT_SIMULATOR:-off}|" \
      -e "s|@PAYOUT_SIMULATOR_DELAY@|${MR_PAYOUT_SIMULATOR_DELAY:-5s}|" \
      -e "s|@TEST_HELPERS@|${MR_TEST_HELPERS:-off}|" -e "s|@DOCS_DIR@|$build/docs|" \
      -e "s|@WEBHOOK_SCHEDULE@|${MR_WEBHOOK_SCHEDULE:-0 5s 5m 30m 2h 5h 10h 10h}|" \
      -e "s|@WEBHOOK_TIMEOUT@|${MR_WEBHOOK_TIMEOUT:-15s}|" -e "s|@WEBHOOK_POLL@|${MR_WEBHOOK_POLL:-5s}|" \
      "$repo/conf/nginx.dev.conf.in" > "$ngx/nginx.conf.new"
  mv "$ngx/nginx.conf.new" "$ngx/nginx.conf"
}

nginx_running() { [ -s "$dir/nginx/logs/nginx.pid" ] && kill -0 "$(cat "$dir/nginx/logs/nginx.pid" 2>/dev/null)" 2>/dev/null; }
nginx_cmd() {
  local preload=
  [ -s "$build/nginx-preload" ] && preload=$(cat "$build/nginx-preload")
  LD_PRELOAD=$preload nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e "$dir/nginx/logs/error.log" "$@"
}

write_env() {
  cat > "$dir/stack.env" <<ENV
MR_BASE_URL='http://127.0.0.1:$port'
MR_DSN='$dsn'
MR_MRCTL='$mrctl'
MR_MASTER_KEY_FILE='$master_key'
MR_REDIS_PORT='$redis_port'
MR_REDIS_CONF='$dir/redis/redis.conf'
MR_REDIS_PASSWORD_FILE='$([ -s "$redis_password_file" ] && echo "$redis_password_file")'
MR_PG_PORT='$pg_port'
MR_STACK_DIR='$dir'
MR_RELOAD='$repo/tools/stack.sh reload $dir'
MR_OPS_URL='http://127.0.0.1:$ops_port'
MR_OPS_TOKEN_FILE='$ops_token'
MR_PG_DATA='$dir/pg/data'
MR_PG_STANDBY_PORT='$standby_port'
MR_PG_STANDBY_DATA='$dir/pg-standby/data'
ENV
}

case "$cmd" in
  up)
    if [ -z "$node_of" ]; then
      [ -s "$dir/pg.dsn" ] || pg_up
      redis_up
      [ -s "$master_key" ] || "$mrctl" master-key create --out "$master_key"
      [ -s "$ops_token" ] || (umask 077; head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$ops_token")
      MR_DSN="$dsn" "$mrctl" migrate >/dev/null
    fi
    render_nginx_conf
    if nginx_running; then nginx_cmd -s reload; else nginx_cmd; fi
    for _ in $(seq 100); do
      curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1
    done
    write_env
    ;;
  reload)
    # New keys, revoked keys and rebuilt modules take effect; in-flight
    # requests finish on the old workers. A configuration that fails to load
    # (database unreachable, say) leaves the running one serving.
    render_nginx_conf
    nginx_cmd -t -q
    nginx_cmd -s reload
    # Wait until a new generation of workers has taken over.
    sleep 0.5
    ;;
  down)
    if nginx_running; then
      nginx_cmd -s quit || true
      for _ in $(seq 100); do nginx_running || break; sleep 0.1; done
      nginx_running && kill -9 "$(cat "$dir/nginx/logs/nginx.pid")" 2>/dev/null || true
    fi
    [ -n "$node_of" ] && exit 0  # the other stack's services are not ours
    rcli shutdown nosave >/dev/null 2>&1 || true
    for data in "$dir/pg/data" "$dir/pg-standby/data"; do
      if [ -s "$data/PG_VERSION" ]; then
        as_pg "$pgbin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
      fi
    done
    ;;
  status)
    nginx_running && echo "nginx: running" || echo "nginx: stopped"
    [ -n "$node_of" ] && exit 0
    rcli ping >/dev/null 2>&1 && echo "redis: running" || echo "redis: stopped"
    if [ -s "$dir/pg.dsn" ]; then
      psql "$dsn" -XtAc "SELECT 1" >/dev/null 2>&1 && echo "postgres: reachable" || echo "postgres: unreachable"
    else
      as_pg "$pgbin/pg_ctl" -D "$dir/pg/data" status >/dev/null 2>&1 && echo "postgres: running" || echo "postgres: stopped"
    fi
    if [ -n "$standby_port" ]; then
      as_pg "$pgbin/pg_ctl" -D "$dir/pg-standby/data" status >/dev/null 2>&1 && echo "standby: running" || echo "standby: stopped"
    fi
    ;;
  *) echo "usage: $0 up|down|reload|status <dir>" >&2; exit 2 ;;
esac
