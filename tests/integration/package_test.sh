#!/usr/bin/env bash
# package_test.sh <packages dir> <test.env> <load client> <work dir>
# The Debian packages on this machine's stock /usr/sbin/nginx, with the
# commands of the operator guide ("Install from packages", "Upgrade the
# modules"): install (dpkg -i), nginx -t and a signed request through the
# installed snippets against the fixture's PostgreSQL and Redis, an upgrade
# to a bumped version under load followed by a graceful reload (no request
# may fail, the master is never restarted), then dpkg -r and dpkg -P (no
# file left, nginx still starts). Between install and upgrade, with the
# fixture's PostgreSQL stopped: nginx -s reopen, -t, -s reload and a fresh
# start succeed from the catalogue snapshot (operator guide, "When the
# catalogue database is down"). nginx runs under <work dir> on a free port.
#
# It changes the machine only while it runs: it skips (exit 77) when either
# package is already known to dpkg, and puts back what it found. Runs as
# root; one at a time per machine (flock), whatever the worktree.
set -euo pipefail
pkgs=${1:?packages dir} test_env=${2:?test.env} load_client=${3:?load client} work=${4:?work dir}
packages=(libnginx-mod-http-mr mr-partner-tools)

[ "$(id -u)" -eq 0 ] || { echo "SKIP: dpkg -i needs root"; exit 77; }
exec 9>/run/lock/mr-package-test.lock
flock 9
for p in "${packages[@]}"; do
  state=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  if [ -n "$state" ] && [ "$state" != not-installed ]; then
    echo "SKIP: $p is $state on this machine; this test installs and removes only its own"
    exit 77
  fi
done

source "$pkgs/versions.env"   # V1, V2
source "$test_env"            # the fixture: MR_DSN, MR_MASTER_KEY_FILE, MR_REDIS_PORT, MR_KEY_A_*
rm -rf "$work"; mkdir -p "$work"; work=$(cd "$work" && pwd)
enabled=/etc/nginx/modules-enabled
modules_dir=/usr/lib/nginx/modules
snippets=/usr/share/nginx/mr/snippets

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
free_port() { "$(dirname "$0")/../../tools/free-port.sh"; }

# nginx_at <name> <args...>: the stock binary on a prefix of its own, as an
# operator would run a second instance (or the stock one with -p /etc/nginx).
nginx_at() { local n=$1; shift; /usr/sbin/nginx -p "$work/$n" -c "$work/$n/nginx.conf" -e "$work/$n/logs/error.log" "$@"; }
master_pid() { cat "$work/$1/logs/nginx.pid" 2>/dev/null || true; }
stop_nginx() {
  local pid; pid=$(master_pid "$1")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  nginx_at "$1" -s quit || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}
# A prefix whose modules/ is Debian's, so the relative load_module lines of
# Debian's own module packages in modules-enabled resolve as they do in
# the stock prefix (/usr/share/nginx/modules).
make_prefix() {
  mkdir -p "$work/$1/logs" "$work/$1/tmp"
  ln -sfn "$modules_dir" "$work/$1/modules"
}
temp_paths='client_body_temp_path tmp/client_body; proxy_temp_path tmp/proxy; fastcgi_temp_path tmp/fastcgi;
    uwsgi_temp_path tmp/uwsgi; scgi_temp_path tmp/scgi;'

# A site that uses none of the modules, loading whatever modules-enabled
# holds, like the stock nginx.conf: installing or removing our package must
# not stop it from starting.
plain_starts() {
  local port; port=$(free_port)
  make_prefix plain
  cat > "$work/plain/nginx.conf" <<CONF
include $enabled/*.conf;
pid logs/nginx.pid;
events { worker_connections 64; }
http {
    $temp_paths
    server { listen 127.0.0.1:$port; location / { return 200 "plain\n"; } }
}
CONF
  nginx_at plain || return 1
  local body; body=$(curl -sS --retry 20 --retry-connrefused --retry-delay 0 --max-time 5 "http://127.0.0.1:$port/") || body=
  stop_nginx plain
  [ "$body" = plain ]
}
stock_conf_ok() { /usr/sbin/nginx -t -q 2>/dev/null; }

load_pid=
cleanup() {
  set +e
  [ -n "$load_pid" ] && { touch "$work/load.stop"; wait "$load_pid" 2>/dev/null; }
  stop_nginx api; stop_nginx plain
  for p in "${packages[@]}"; do
    state=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != not-installed ] && dpkg -P "$p" >/dev/null
  done
}
trap cleanup EXIT

before_enabled=$(ls -A "$enabled"); before_modules=$(ls -A "$modules_dir")
stock_before=0; stock_conf_ok || stock_before=1

step "install $V1 (dpkg -i)"
dpkg -i "$pkgs"/v1/libnginx-mod-http-mr_*.deb "$pkgs"/v1/mr-partner-tools_*.deb >"$work/dpkg-install.log" 2>&1 \
  || { cat "$work/dpkg-install.log"; fail "dpkg -i $V1"; }
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$p")" = "installed $V1" ] || fail "$p is not installed at $V1"
done
# The ABI pin: what nginx-dev says this nginx provides, and nginx provides it.
abi=$(sed -n 's/^nginx:abi=//p' /usr/share/nginx/src/debian/libnginx-mod.abisubstvars)
[ -n "$abi" ] || fail "no nginx:abi in nginx-dev"
dpkg-query -W -f='${Depends}' libnginx-mod-http-mr | tr ',' '\n' | grep -qx " *$abi" \
  || fail "libnginx-mod-http-mr does not depend on $abi: $(dpkg-query -W -f='${Depends}' libnginx-mod-http-mr)"
dpkg-query -W -f='${Provides}' nginx | grep -qw "$abi" || fail "nginx does not provide $abi"
[ "$(readlink "$enabled/50-mod-http-mr.conf")" = /usr/share/nginx/modules-available/mod-http-mr.conf ] \
  || fail "no $enabled/50-mod-http-mr.conf symlink"
for m in auth idempotency ledger; do
  grep -qx "load_module $modules_dir/ngx_http_mr_${m}_module-$V1.so;" /usr/share/nginx/modules-available/mod-http-mr.conf \
    || fail "mod-http-mr.conf does not load the $m module of $V1"
done
/usr/bin/mrctl --help >/dev/null && /usr/bin/mrctl key issue --help >/dev/null && /usr/bin/mr-sign --help >/dev/null \
  || fail "installed tools do not answer --help"
# From the .deb: a slim image's dpkg excludes may skip /usr/share/man.
# (The listing is read whole: grep -q closing the pipe early kills dpkg-deb
# with SIGPIPE, which pipefail would report as a missing page.)
listing=$(dpkg-deb -c "$pkgs"/v1/mr-partner-tools_*.deb)
for page in mrctl mr-sign; do
  grep -q "/usr/share/man/man1/$page.1.gz$" <<<"$listing" || fail "no man page $page.1"
done
if [ $stock_before -eq 0 ]; then stock_conf_ok || fail "the stock /etc/nginx/nginx.conf no longer passes nginx -t"; fi
plain_starts || fail "a site without mr directives does not start with the modules enabled"

step "nginx -t and a signed request through the installed snippets"
port=$(free_port)
make_prefix api
cat > "$work/api/nginx.conf" <<CONF
include $enabled/*.conf;
pid logs/nginx.pid;
# warn: the snapshot's notice when the database is down (Debian's default is error).
error_log logs/error.log warn;
worker_processes 2;
events { worker_connections 1024; }
http {
    mr_environment sandbox;
    mr_catalogue_dsn "$MR_DSN";
    mr_master_key_file $MR_MASTER_KEY_FILE;
    mr_ledger_dsn "$MR_DSN";
    mr_redis 127.0.0.1:$MR_REDIS_PORT;
    mr_metrics_zone mr_metrics;
    include $snippets/mr-http.conf;
    $temp_paths
    server {
        listen 127.0.0.1:$port;
        access_log logs/access.log mr_json;
        include $snippets/mr-partner-api.conf;
    }
}
CONF
nginx_at api -t -q || fail "nginx -t with the installed modules and snippets"
nginx_at api
base="http://127.0.0.1:$port"
curl -sS -o /dev/null --retry 20 --retry-connrefused --retry-delay 0 --max-time 5 "$base/" || fail "nginx does not answer"
export MR_KEY_ID=$MR_KEY_A_ID MR_KEY_SECRET=$MR_KEY_A_SECRET
member="pkg-$$-$(date +%s)"
printf '{"partnerRef":"club-a","member":{"externalMemberId":"%s","firstName":"P","lastName":"K","email":"p@k.example"}}' \
  "$member" | /usr/bin/mr-sign --method POST --path /api/v1/members --body - --send "$base" > "$work/member.out" \
  || { cat "$work/member.out"; fail "signed POST /api/v1/members"; }
head -1 "$work/member.out" | grep -q " 201 " || fail "member not created: $(head -1 "$work/member.out")"
/usr/bin/mr-sign --method GET --path "/api/v1/members/$member/balance" --send "$base" > "$work/balance.out" \
  || { cat "$work/balance.out"; fail "signed GET balance"; }

step "PostgreSQL stopped: signals, nginx -t, a reload and a fresh start serve the last-known-good keys"
# The catalogue snapshot beside the master key was written by the loads
# above. The fixture's PostgreSQL is stopped for this step only (this test
# runs alone: RUN_SERIAL) and started again before anything else.
pg_ctl_as_pg() { runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$MR_PG_DATA" "$@"; }
# Through the edge with the snapshot's keys: limit=0 is refused by the
# ledger's validation, which needs no database; an unknown key by the edge.
edge_answer() {
  /usr/bin/mr-sign --method GET --path "/api/v1/members/$member/points?limit=0" --send "$base" 2>&1 \
    | sed -n 's/.*"code":"\([a-z_]*\)".*/\1/p' | head -1 || true
}
pg_ctl_as_pg -m fast -w stop >/dev/null
pg_restart() { pg_ctl_as_pg -w -l "$MR_STACK_DIR/pg/postgres.log" start >/dev/null 2>&1 || true; }
trap 'pg_restart; cleanup' EXIT
nginx_at api -s reopen || fail "nginx -s reopen with the database down"
nginx_at api -t -q 2>"$work/t-down.err" || { cat "$work/t-down.err"; fail "nginx -t with the database down"; }
grep -q "serving the .* keys of the snapshot" "$work/t-down.err" || fail "nginx -t did not say it serves the snapshot"
nginx_at api -s reload || fail "nginx -s reload with the database down"
for _ in $(seq 50); do grep -q "serving the" "$work/api/logs/error.log" && break; sleep 0.1; done
grep -q "\[warn\].*serving the .* keys of the snapshot" "$work/api/logs/error.log" || fail "the reload's warning is not in the error log"
[ "$(edge_answer)" = invalid_request ] || fail "the snapshot's keys do not pass the edge after the reload: $(edge_answer)"
stop_nginx api
nginx_at api || fail "a fresh start with the database down"
answer=
for _ in $(seq 50); do answer=$(edge_answer); [ "$answer" = invalid_request ] && break; sleep 0.1; done
[ "$answer" = invalid_request ] || fail "a fresh start does not serve the snapshot's keys: $answer"
pg_restart
trap cleanup EXIT
nginx_at api -s reload
# The pool reconnects by itself (a refused slot pauses a second): the
# database answers again before the load starts.
for _ in $(seq 100); do
  /usr/bin/mr-sign --method GET --path "/api/v1/members/$member/balance" --send "$base" >/dev/null 2>&1 && break
  sleep 0.1
done
/usr/bin/mr-sign --method GET --path "/api/v1/members/$member/balance" --send "$base" >/dev/null \
  || fail "the database does not answer again after PostgreSQL came back"

step "upgrade to $V2 under load, then a graceful reload"
"$load_client" "$base" "$MR_KEY_A_ID" "$MR_KEY_A_SECRET" "$member" "$work/load.stop" "$work/load.ready" \
  > "$work/load.json" 2> "$work/load.err" &
load_pid=$!
for _ in $(seq 100); do [ -e "$work/load.ready" ] && break; sleep 0.1; done
[ -e "$work/load.ready" ] || { cat "$work/load.err"; fail "the load client got no answer"; }
master=$(master_pid api)
dpkg -i "$pkgs"/v2/libnginx-mod-http-mr_*.deb "$pkgs"/v2/mr-partner-tools_*.deb >"$work/dpkg-upgrade.log" 2>&1 \
  || { cat "$work/dpkg-upgrade.log"; fail "dpkg -i $V2"; }
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$p")" = "installed $V2" ] || fail "$p is not at $V2"
done
[ "$(master_pid api)" = "$master" ] && kill -0 "$master" || fail "the upgrade restarted nginx"
[ ! -e "$modules_dir/ngx_http_mr_auth_module-$V1.so" ] || fail "the $V1 modules are still on disk"
[ -L "$enabled/50-mod-http-mr.conf" ] || fail "the upgrade dropped the modules-enabled symlink"
nginx_at api -t -q || fail "nginx -t after the upgrade"
nginx_at api -s reload
# The reload is done when no process maps the old modules any more (old
# workers finish their requests and exit) and the new workers map the new.
old_gone=
for _ in $(seq 300); do
  if ! grep -qs "ngx_http_mr_auth_module-$V1.so" /proc/[0-9]*/maps; then old_gone=1; break; fi
  sleep 0.1
done
[ -n "$old_gone" ] || fail "old workers still map the $V1 modules 30 s after the reload"
workers=$(pgrep -P "$master" || true)
[ -n "$workers" ] || fail "no workers after the reload"
want=$(printf 'ngx_http_mr_%s_module-%s.so\n' auth "$V2" idempotency "$V2" ledger "$V2")
checked=0
for w in $workers; do
  # The operator guide's command to see which build a worker runs.
  runs=$(grep -o 'ngx_http_mr_[a-z]*_module-[^ ]*' "/proc/$w/maps" 2>/dev/null | sort -u || true)
  # An old worker still exiting has given up its memory (empty maps) before
  # its pid: pgrep can list it after the wait above. A live worker always
  # maps its modules.
  [ -n "$runs" ] || continue
  [ "$runs" = "$want" ] || fail "worker $w runs: $runs"
  checked=$((checked + 1))
done
[ "$checked" -gt 0 ] || fail "no worker of the new generation to check"
# Load on the new workers: the old ones have exited, so every answer the
# access log (unbuffered) gains from here is theirs.
access_log="$work/api/logs/access.log"
logged_before=$(wc -l < "$access_log")
new_answers() { tail -n +"$((logged_before + 1))" "$access_log" | grep -c '"status":200' || true; }
for _ in $(seq 300); do [ "$(new_answers)" -ge 40 ] && break; sleep 0.1; done
[ "$(new_answers)" -ge 40 ] || fail "the new workers answered $(new_answers) requests with 200 in 30 s, not 40"
touch "$work/load.stop"
load_rc=0; wait "$load_pid" || load_rc=$?; load_pid=
echo "load: $(cat "$work/load.json")"
[ $load_rc -eq 0 ] || { cat "$work/load.err"; fail "requests failed across the upgrade and reload"; }
[ "$(master_pid api)" = "$master" ] || fail "the master changed"
# Every award answered 200 was booked once: the balance is their count.
awarded=$(sed -n 's/.*"awarded":\([0-9]*\).*/\1/p' "$work/load.json")
[ "${awarded:-0}" -gt 0 ] || fail "no award went through"
/usr/bin/mr-sign --method GET --path "/api/v1/members/$member/balance" --send "$base" > "$work/balance.out" \
  || fail "balance after the upgrade"
grep -q "\"pointsBalance\":$awarded\b" "$work/balance.out" \
  || fail "balance is not the $awarded awards: $(tail -1 "$work/balance.out")"
stop_nginx api

step "remove (dpkg -r) and purge (dpkg -P)"
owned=$(dpkg-query -L "${packages[@]}" | sort -u)
dpkg -r "${packages[@]}" >"$work/dpkg-remove.log" 2>&1 || { cat "$work/dpkg-remove.log"; fail "dpkg -r"; }
[ ! -e "$enabled/50-mod-http-mr.conf" ] || fail "dpkg -r left 50-mod-http-mr.conf enabled"
if [ $stock_before -eq 0 ]; then stock_conf_ok || fail "the stock nginx.conf fails nginx -t after dpkg -r"; fi
plain_starts || fail "nginx does not start after dpkg -r"
dpkg -P "${packages[@]}" >"$work/dpkg-purge.log" 2>&1 || { cat "$work/dpkg-purge.log"; fail "dpkg -P"; }
for p in "${packages[@]}"; do
  state=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ -z "$state" ] || [ "$state" = not-installed ] || fail "$p is still $state"
done
left=$(while IFS= read -r f; do [ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done <<< "$owned" || true)
[ -z "$left" ] || fail "files left after purge: $left"
[ ! -e $snippets ] || fail "$snippets left after purge"
[ "$(ls -A "$enabled")" = "$before_enabled" ] || fail "$enabled differs from before: $(ls -A "$enabled")"
[ "$(ls -A "$modules_dir")" = "$before_modules" ] || fail "$modules_dir differs from before"
plain_starts || fail "nginx does not start after dpkg -P"
echo "package test: ok ($V1 -> $V2)"
