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
#   MR_ENVIRONMENT [sandbox]      mr_environment of the nginx server
#   MR_PG_OPTS []                 extra postgres -c options (tests: fsync=off)
#   MR_RATE_LIMIT [100r/s] MR_RATE_BURST [200]   per-key limit_req
#   MR_OPS_PORT [8081]            the ops listener
#   MR_PAYOUT_SIMULATOR [off] MR_PAYOUT_SIMULATOR_DELAY [5s]   sandbox payouts settle by
#                                 themselves (read at every up/reload, not kept)
# Writes <dir>/stack.env with the addresses, for scripts and tests to source.
set -euo pipefail
cmd=${1:?up|down|reload|status} dir=${2:?stack dir}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
# Ports and build chosen at `up` are kept, so reload/down/status need no
# environment.
[ -f "$dir/ports" ] && [ "$cmd" != up ] && source "$dir/ports"
build=${MR_BUILD_DIR:-$repo/build}
port=${MR_PORT:-8080} pg_port=${MR_PG_PORT:-15432} redis_port=${MR_REDIS_PORT:-16379}
ops_port=${MR_OPS_PORT:-8081}
[ "$cmd" = up ] && printf 'MR_PORT=%s\nMR_PG_PORT=%s\nMR_REDIS_PORT=%s\nMR_OPS_PORT=%s\nMR_RATE_LIMIT=%s\nMR_RATE_BURST=%s\nMR_BUILD_DIR=%q\n' \
  "$port" "$pg_port" "$redis_port" "$ops_port" "${MR_RATE_LIMIT:-100r/s}" "${MR_RATE_BURST:-200}" "$build" > "$dir/ports"
env_name=${MR_ENVIRONMENT:-sandbox}
pgbin=/usr/lib/postgresql/15/bin
dsn="host=127.0.0.1 hostaddr=127.0.0.1 port=$pg_port dbname=mr user=postgres gssencmode=disable sslmode=disable"
mrctl="$build/tools/mrctl/mrctl"
as_pg() { runuser -u postgres -- "$@"; }

pg_up() {
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
  if ! as_pg "$pgbin/pg_ctl" -D "$dir/pg/data" status >/dev/null 2>&1; then
    as_pg "$pgbin/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w -t 60 \
      -o "${MR_PG_OPTS:-}" start >/dev/null
  fi
  if ! as_pg psql -h 127.0.0.1 -p "$pg_port" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='mr'" | grep -q 1; then
    as_pg psql -h 127.0.0.1 -p "$pg_port" -U postgres -qc "CREATE DATABASE mr" >/dev/null
  fi
}

redis_up() {
  mkdir -p "$dir/redis"
  if ! redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1; then
    redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$dir/redis" \
      --daemonize yes --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/redis.log" \
      --save "" --appendonly no >/dev/null
    for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
}

render_nginx_conf() {
  local ngx="$dir/nginx"
  mkdir -p "$ngx/logs" "$ngx/tmp" "$ngx/modules"
  "$repo/tools/install-modules.sh" "$build/nginx-modules" "$ngx/modules"
  rm -rf "$ngx/snippets.new"; cp -r "$repo/conf/snippets" "$ngx/snippets.new"
  rm -rf "$ngx/snippets"; mv "$ngx/snippets.new" "$ngx/snippets"
  sed -e "s|@MODULES_CONF@|$ngx/modules/load_modules.conf|" \
      -e "s|@ENVIRONMENT@|$env_name|" -e "s|@DSN@|$dsn|" \
      -e "s|@MASTER_KEY_FILE@|$dir/master.key|" -e "s|@PORT@|$port|" \
      -e "s|@REDIS@|127.0.0.1:$redis_port|" -e "s|@CONF_DIR@|$ngx|" \
      -e "s|@RATE_LIMIT@|${MR_RATE_LIMIT:-100r/s}|" -e "s|@RATE_BURST@|${MR_RATE_BURST:-200}|" \
      -e "s|@OPS_PORT@|$ops_port|" -e "s|@OPS_TOKEN_FILE@|$dir/ops.token|" \
      -e "s|@PAYOUT_SIMULATOR@|${MR_PAYOUT_SIMULATOR:-off}|" \
      -e "s|@PAYOUT_SIMULATOR_DELAY@|${MR_PAYOUT_SIMULATOR_DELAY:-5s}|" \
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
MR_MASTER_KEY_FILE='$dir/master.key'
MR_REDIS_PORT='$redis_port'
MR_PG_PORT='$pg_port'
MR_STACK_DIR='$dir'
MR_RELOAD='$repo/tools/stack.sh reload $dir'
MR_OPS_URL='http://127.0.0.1:$ops_port'
MR_OPS_TOKEN_FILE='$dir/ops.token'
ENV
}

case "$cmd" in
  up)
    pg_up
    redis_up
    [ -s "$dir/master.key" ] || "$mrctl" master-key create --out "$dir/master.key"
    [ -s "$dir/ops.token" ] || (umask 077; head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$dir/ops.token")
    MR_DSN="$dsn" "$mrctl" migrate >/dev/null
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
    redis-cli -h 127.0.0.1 -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
    if [ -s "$dir/pg/data/PG_VERSION" ]; then
      as_pg "$pgbin/pg_ctl" -D "$dir/pg/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    ;;
  status)
    nginx_running && echo "nginx: running" || echo "nginx: stopped"
    redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1 && echo "redis: running" || echo "redis: stopped"
    as_pg "$pgbin/pg_ctl" -D "$dir/pg/data" status >/dev/null 2>&1 && echo "postgres: running" || echo "postgres: stopped"
    ;;
  *) echo "usage: $0 up|down|reload|status <dir>" >&2; exit 2 ;;
esac
