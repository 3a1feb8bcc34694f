#!/usr/bin/env bash
# operator_guide_test.sh <guide.md> <packages dir> <work dir>
# The operator guide's doc test: every fenced block of docs/operator-guide.md
# that directly follows a marker line is run, in the guide's order, as root,
# on this machine's stock Debian 12 nginx (/usr/sbin/nginx, /etc/nginx),
# with the packages package_build.sh made (the same .debs as
# package_install_test). The markers:
#
#   <!-- runnable -->              the next block is shell commands: they run
#                                  in one bash session shared by every block
#                                  (set -e -o pipefail; a failing command
#                                  fails the test), in a scratch folder
#                                  standing for the repository's folder
#                                  (build/packages/ holds the .debs)
#   <!-- runnable: file PATH -->   the next block is the content of PATH: the
#                                  first such block writes it, later ones
#                                  append to it
#
# The test fails when a marked block fails, when a marker is not followed
# by a fenced block, and when the guide has no marked block. After the last
# block (the guide's Remove section) nothing the guide made may be left:
# no package, no file under /etc/nginx or /var/log/nginx of the API, no
# database or role, and the stock nginx.conf still passes nginx -t.
#
# What stands in for the operator's machines: a PostgreSQL 15 cluster of the
# test's own, made like Debian's pg_createcluster (peer for local
# connections, scram-sha-256 over TCP, TLS with a certificate of its own),
# on a free port with its socket in the work dir: the session exports
# PGHOST and PGPORT, so psql, createdb and the like (runuser keeps the
# environment) reach it as they would the default cluster; a redis-server
# started with the password file the guide makes; the stock nginx started
# by the test with the stock nginx.conf, as the nginx service would be.
#
# Placeholders of the guide are replaced before a block runs, from the
# table SUBST below (the guide itself is never rewritten otherwise); a row
# may name a setup function the test runs first (e.g. a redemption whose
# payout a block reports on).
#
# It changes the machine only while it runs: it skips (exit 77) when a
# package or one of the files the guide makes is already there, and puts
# back what it found (a running stock nginx is used and reloaded back onto
# its own configuration; otherwise the test starts one and stops it). One at a time per machine
# (the package tests' flock).
set -euo pipefail
guide=${1:?guide} pkgs=${2:?packages dir} work=${3:?work dir}
packages=(libnginx-mod-http-mr mr-partner-tools)
# The files the guide makes on the package path (checked absent before,
# and after its Remove section).
made_files=(/etc/nginx/conf.d/mr-partner-api.conf /etc/nginx/mr-master.key /etc/nginx/mr-ops.token
            /etc/nginx/mr-redis.password /etc/nginx/mr-catalogue-production.snapshot
            /var/log/nginx/mr-access.log /root/mr-owner.dsn /root/mr-api.dsn)
repo=$(cd "$(dirname "$0")/../.." && pwd)
pgbin=/usr/lib/postgresql/15/bin

[ "$(id -u)" -eq 0 ] || { echo "SKIP: the guide's commands need root"; exit 77; }
exec 9>/run/lock/mr-package-test.lock
flock 9
skip() { echo "SKIP: $*"; exit 77; }
for p in "${packages[@]}"; do
  state=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ -z "$state" ] || [ "$state" = not-installed ] || skip "$p is $state on this machine"
done
for f in "${made_files[@]}"; do [ ! -e "$f" ] || skip "$f exists; this test makes and removes only its own"; done

fail() { echo "FAIL: $*" >&2; exit 1; }
pkgs=$(cd "$pkgs" && pwd); source "$pkgs/versions.env"   # V1, V2
rm -rf "$work"; mkdir -p "$work"; work=$(cd "$work" && pwd)
free_port() { "$repo/tools/free-port.sh" "$@"; }
db_password=$(head -c 12 /dev/urandom | base64 | tr "+/" "-_")   # both roles' (the guide's "password=...")
api_port=$(free_port); ops_port=$(free_port "$api_port"); redis_port=$(free_port "$api_port" "$ops_port")
pg_port=$(free_port "$api_port" "$ops_port" "$redis_port")

# The repository's folder as the guide's commands expect it: the .debs of
# this tree in build/packages/ (the bumped build as the guide's upgrade).
mkdir -p "$work/repo/build/packages"
for f in "$pkgs"/v1/*.deb; do ln -s "$f" "$work/repo/build/packages/"; done
for p in "${packages[@]}"; do
  ln -s "$pkgs"/v2/"${p}"_*.deb "$work/repo/build/packages/${p}_0.1.1_amd64.deb"
done

# ---- substitutions: placeholder (literal text of the guide) | replacement | setup run first
# Replacements are shell text: they are expanded when the block runs.
SUBST=(
  'host=db.internal'               "host=127.0.0.1 port=$pg_port"         ''
  'password=...'                   "password=$db_password"                ''
  '10.0.0.10'                      '127.0.0.1'                            ''
  'port=5432'                      "port=$pg_port"                        ''
  '10.0.0.11:6379'                 "127.0.0.1:$redis_port"                'doc_redis_up'
  '10.0.0.5:8081'                  "127.0.0.1:$ops_port"                  ''
  'listen 443 ssl;'                "listen 127.0.0.1:$api_port;"          ''
  'https://api.example.com'        "http://127.0.0.1:$api_port"           ''
  'MR_KEY_ID=mrk_prd_...'          'MR_KEY_ID=$(doc_key newest keyId)'    ''
  'MR_KEY_SECRET=...'              'MR_KEY_SECRET=$(doc_key newest secret)' ''
  'mrk_prd_...'                    '$(doc_key oldest keyId)'              ''
  'po_...'                         '$DOC_PAYOUT'                          'doc_new_payout'
  '<worker pid>'                   '$(pgrep -P "$(cat /run/nginx.pid)" | head -1)' ''
  '8a5436263784549310dac540c8b02b1c' '$DOC_REQUEST_ID'                    'doc_wait_logged'
  # nginx -s reload only signals the master: a person typing the next
  # command gives the new workers the moment they need; the test waits
  # until they replaced the old ones. (set -e ignores a failure on the
  # left of &&: "|| exit" makes it count.)
  'nginx -t && nginx -s reload'    'nginx -t && doc_reload || exit'       ''
  'nginx -s reload'                'doc_reload'                           ''
)

# set -e does not stop at a failing command left of "&&": such a list may
# only end a block, or end in "|| exit" (from the table above).
unguarded_and_list() {
  local -a lines; local i last=-1 code
  mapfile -t lines <<<"$1"
  for i in "${!lines[@]}"; do code=${lines[i]%%#*}; [[ $code =~ [^[:space:]] ]] && last=$i; done
  for i in "${!lines[@]}"; do
    code=${lines[i]%%#*}
    if [ "$i" -lt "$last" ] && [[ $code == *'&&'* ]] && ! [[ $code =~ \|\|\ exit[[:space:]]*$ ]]; then
      echo "${lines[i]}"; return 0
    fi
  done
  return 1
}

# ---- the marked blocks, in the guide's order
# blocks/NNN.{sh,file} and blocks/NNN.meta ("<guide line> <kind> [path]").
mkdir -p "$work/blocks"
awk -v dir="$work/blocks" '
  function die(m) { print "operator-guide.md:" NR ": " m > "/dev/stderr"; bad = 1; exit 1 }
  /^[ \t]*<!-- runnable( *: *file [^ ]+)? *-->[ \t]*$/ {
    if (pending) die("a marker not followed by a fenced block")
    kind = "sh"; path = ""
    if (match($0, /file [^ ]+/)) { kind = "file"; path = substr($0, RSTART + 5, RLENGTH - 5) }
    pending = 1; next
  }
  pending && /^[ \t]*$/ { die("a blank line between a marker and its block") }
  pending {
    if (!match($0, /^[ \t]*```/)) die("a marker not followed by a fenced block")
    indent = RLENGTH - 3; pending = 0; inblock = 1; n++
    out = sprintf("%s/%03d.%s", dir, n, kind)
    printf "" > out
    printf "%d %s %s\n", NR, kind, path > sprintf("%s/%03d.meta", dir, n)
    next
  }
  inblock {
    if ($0 ~ "^[ \t]*```[ \t]*$") { inblock = 0; close(out); next }
    print substr($0, indent + 1) > out
  }
  END {
    if (bad) exit 1
    if (pending) die("a marker at the end of the guide")
    if (inblock) die("a marked block that never closes")
  }' "$guide" || fail "the guide's markers are malformed"
nblocks=$(find "$work/blocks" -name '*.meta' | wc -l)
[ "$nblocks" -gt 0 ] || fail "the guide has no marked block (<!-- runnable -->): nothing would be tested"

# ---- the machine, put back on exit
started_nginx= service_nginx= pg_data="$work/pg/data" redis_pid=
cleanup() {
  set +e
  if [ -n "$started_nginx" ] && [ -s /run/nginx.pid ]; then
    # Signals, not nginx -s: the configuration may not parse any more.
    pid=$(cat /run/nginx.pid); kids=$(pgrep -P "$pid")
    kill -QUIT "$pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" $kids 2>/dev/null
  fi
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null
  [ -d "$pg_data" ] && runuser -u postgres -- "$pgbin/pg_ctl" -D "$pg_data" -m immediate -w stop >/dev/null 2>&1
  for p in "${packages[@]}"; do
    state=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != not-installed ] && dpkg -P "$p" >/dev/null 2>&1
  done
  rm -f "${made_files[@]}" /var/log/nginx/mr-access.log.* /etc/nginx/mr-catalogue-*.snapshot
  # The machine's running nginx back on its own configuration.
  [ -n "$service_nginx" ] && [ -s /run/nginx.pid ] && kill -HUP "$(cat /run/nginx.pid)" 2>/dev/null
}
trap cleanup EXIT
before_enabled=$(ls -A /etc/nginx/modules-enabled); before_modules=$(ls -A /usr/lib/nginx/modules)
touch "$work/started"

# The database server: a cluster as Debian's pg_createcluster makes one.
mkdir -p "$work/pg"; chown postgres: "$work/pg"
runuser -u postgres -- "$pgbin/initdb" -D "$pg_data" -U postgres -E UTF8 --no-locale \
  --auth-local=peer --auth-host=scram-sha-256 >"$work/pg/initdb.log" 2>&1 || { cat "$work/pg/initdb.log"; fail initdb; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
  -keyout "$pg_data/server.key" -out "$pg_data/server.crt" 2>/dev/null
chown postgres: "$pg_data/server.key" "$pg_data/server.crt"; chmod 600 "$pg_data/server.key"
cat >> "$pg_data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$work/pg'
ssl = on
fsync = off
CONF
# (9>&-: nothing the test starts may keep the machine's lock after it.)
runuser -u postgres -- "$pgbin/pg_ctl" -D "$pg_data" -l "$work/pg/postgres.log" -w -t 60 start >/dev/null 9>&- \
  || { cat "$work/pg/postgres.log"; fail "PostgreSQL does not start"; }

# The stock nginx, running as the nginx service would: the machine's own if
# it runs (reloaded onto its own configuration after), else one the test
# starts and stops.
/usr/sbin/nginx -t -q || skip "the stock /etc/nginx/nginx.conf does not pass nginx -t before the test"
if [ -s /run/nginx.pid ] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; then
  service_nginx=1
else
  /usr/sbin/nginx 9>&- || skip "the stock nginx does not start (is its port 80 taken?)"
  started_nginx=1
fi

# ---- the session that runs the blocks
# Helpers the substitutions call; the transcript is every block's output.
transcript="$work/transcript"; : > "$transcript"
cat > "$work/session.sh" <<SESSION
set -e -o pipefail
cd "$work/repo"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
export PGHOST="$work/pg" PGPORT=$pg_port
DOC_WORK="$work"; DOC_REDIS_PORT=$redis_port; DOC_API="http://127.0.0.1:$api_port"
SESSION
cat >> "$work/session.sh" <<'SESSION'
# A block's heading in the transcript, on a line of its own (curl's
# answers end without a newline).
doc_mark() {
  [ -z "$(tail -c1 "$DOC_WORK/transcript")" ] || echo >> "$DOC_WORK/transcript"
  echo "$1" >> "$DOC_WORK/transcript"
}
# doc_key newest|oldest keyId|secret: a key the guide's own commands issued
# (from their printed {"keyId","secret",...}).
doc_key() {
  local lines; lines=$(grep -o '{"keyId":"[^"]*","secret":"[^"]*"' "$DOC_WORK/transcript") || return 1
  case $1 in newest) lines=$(tail -1 <<<"$lines") ;; oldest) lines=$(head -1 <<<"$lines") ;; esac
  sed -n "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p" <<<"$lines"
}
# The request id of the last answer the guide's mr-sign printed, once the
# buffered access log has it.
doc_wait_logged() {
  DOC_REQUEST_ID=$(grep -io '^x-request-id: *[0-9a-f]*' "$DOC_WORK/transcript" | tail -1 | sed 's/.*: *//')
  [ -n "$DOC_REQUEST_ID" ] || { echo "doc test: no X-Request-Id printed yet" >&2; return 1; }
  # The guide: nginx creates its logs 0640 at most (member ids in paths).
  local mode; mode=$(stat -c %a /var/log/nginx/mr-access.log) || return 1
  (( (8#$mode & 8#137) == 0 )) || { echo "doc test: /var/log/nginx/mr-access.log is mode $mode, not 0640 at most" >&2; return 1; }
  for _ in $(seq 60); do grep -qs "$DOC_REQUEST_ID" /var/log/nginx/mr-access.log && return 0; sleep 0.1; done
  echo "doc test: $DOC_REQUEST_ID not in /var/log/nginx/mr-access.log after 6 s" >&2; return 1
}
# nginx -s reload, then until the master's workers are all new ones.
doc_reload() {
  local master old now _
  master=$(cat /run/nginx.pid); old=$(pgrep -P "$master" | sort || true)
  nginx -s reload || return
  for _ in $(seq 200); do
    now=$(pgrep -P "$master" | sort || true)
    if [ -n "$(comm -13 <(echo "$old") <(echo "$now"))" ] && [ -z "$(comm -12 <(echo "$old") <(echo "$now"))" ]; then
      return 0
    fi
    sleep 0.05
  done
  echo "doc test: nginx -s reload did not replace the workers within 10 s (refused? see /var/log/nginx/error.log)" >&2
  tail -5 /var/log/nginx/error.log >&2; return 1
}
# Redis as the guide's operator runs it: requirepass from the password file
# the guide made.
doc_redis_up() {
  [ -z "${DOC_REDIS_PID:-}" ] || return 0
  [ -s /etc/nginx/mr-redis.password ] || { echo "doc test: no /etc/nginx/mr-redis.password yet" >&2; return 1; }
  mkdir -p "$DOC_WORK/redis"
  { echo "port $DOC_REDIS_PORT"; echo "bind 127.0.0.1"; echo "save \"\""; echo "appendonly no"
    echo "dir $DOC_WORK/redis"; echo "requirepass $(cat /etc/nginx/mr-redis.password)"; } > "$DOC_WORK/redis/redis.conf"
  chmod 600 "$DOC_WORK/redis/redis.conf"
  redis-server "$DOC_WORK/redis/redis.conf" > "$DOC_WORK/redis/redis.log" 2>&1 &
  DOC_REDIS_PID=$!; echo "$DOC_REDIS_PID" > "$DOC_WORK/redis.pid"
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$DOC_REDIS_PORT) 2>/dev/null && return 0; sleep 0.05; done
  echo "doc test: redis-server does not start" >&2; return 1
}
# A fresh payout in state created: a member of acme earns points and
# redeems them, signed with the newest key the guide issued.
doc_new_payout() {
  local m="doc-$RANDOM$RANDOM" out
  export MR_KEY_ID=$(doc_key newest keyId) MR_KEY_SECRET=$(doc_key newest secret)
  printf '{"partnerRef":"acme","member":{"externalMemberId":"%s","firstName":"D","lastName":"T","email":"d@t.example","wallet":{"bankAccount":{"accountNumber":"12345678","sortCode":"400000","name":"D T"}}}}' "$m" |
    mr-sign --method POST --path /api/v1/members --body - --send "$DOC_API" >/dev/null
  printf '{"partnerRef":"acme","eventId":"e-%s","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":"%s"},"transaction":{"externalTransactionId":"tx-%s","merchantId":"m","merchantName":"S","amountMinor":50000,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"}}' "$m" "$m" "$m" |
    mr-sign --method POST --path /api/v1/transactions/settled --body - --send "$DOC_API" >/dev/null
  out=$(printf '{"partnerRef":"acme","requestId":"r-%s","member":{"externalMemberId":"%s"},"redemption":{"points":200,"currency":"GBP"}}' "$m" "$m" |
    mr-sign --method POST --path /api/v1/redemptions --body - --send "$DOC_API")
  DOC_PAYOUT=$(grep -o '"payoutId":"po_[^"]*"' <<<"$out" | head -1 | cut -d'"' -f4)
  [ -n "$DOC_PAYOUT" ] || { echo "doc test: no payout: $out" >&2; return 1; }
}
SESSION

n_sh=0 n_file=0
for meta in "$work"/blocks/*.meta; do
  read -r line kind path < "$meta"
  body=$(cat "${meta%.meta}.$kind")
  setups=
  for ((i = 0; i < ${#SUBST[@]}; i += 3)); do
    from=${SUBST[i]} to=${SUBST[i+1]} setup=${SUBST[i+2]}
    if [[ $body == *"$from"* ]]; then
      body=${body//"$from"/"$to"}
      [ -z "$setup" ] || setups+="$setup; "
    fi
  done
  {
    printf '\ndoc_mark "== operator-guide.md line %s (%s%s)"\n' "$line" "$kind" "${path:+ $path}"
    printf 'DOC_LINE=%s\n' "$line"
    [ -z "$setups" ] || printf '%s\n' "$setups"
    if [ "$kind" = sh ]; then
      n_sh=$((n_sh + 1))
      if bad=$(unguarded_and_list "$body"); then
        fail "operator-guide.md line $line: a failure left of && would go unnoticed (set -e): end the block with it, or split it: $bad"
      fi
      printf '{\n%s\n} < /dev/null >> "$DOC_WORK/transcript" 2>&1\n' "$body"
    else
      n_file=$((n_file + 1))
      if grep -qx "$path" "$work/written" 2>/dev/null; then op='>>'; else op='>'; echo "$path" >> "$work/written"; fi
      # Quoted: the block's $variables are nginx's (the substitutions for
      # files are plain values, filled in above).
      printf "cat %s %q <<'DOC_EOF'\n%s\nDOC_EOF\n" "$op" "$path" "$body"
    fi
    printf 'sleep 0 # block done\n'
  } >> "$work/session.sh"
done
echo "operator guide: $nblocks marked blocks ($n_sh shell, $n_file files)"

# Each block's output goes to the transcript; a failing command ends the
# session (set -e; in an "a && b" list only when it ends the block).
rc=0; bash "$work/session.sh" >> "$transcript" 2>&1 9>&- || rc=$?
[ -s "$work/redis.pid" ] && redis_pid=$(cat "$work/redis.pid")
if [ "$rc" -ne 0 ]; then
  echo "--- transcript (the last '==' line names the failing block)" >&2; tail -60 "$transcript" >&2
  fail "a marked block of the guide failed (the last '==' line above names it)"
fi

# ---- the guide's Remove section left nothing behind
for p in "${packages[@]}"; do
  state=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ -z "$state" ] || [ "$state" = not-installed ] || fail "after the guide's Remove section, $p is $state"
done
for f in "${made_files[@]}"; do [ ! -e "$f" ] || fail "after the guide's Remove section, $f is left"; done
left=$(ls /var/log/nginx/mr-access.log* /etc/nginx/mr-catalogue-*.snapshot 2>/dev/null || true)
[ -z "$left" ] || fail "after the guide's Remove section: $left"
# Whatever the guide's commands wrote where an operator's files live.
left=$(find /etc/nginx /var/log/nginx /usr/share/nginx /usr/lib/nginx /usr/bin /root -maxdepth 3 -newer "$work/started" \
         ! -type d ! -path /var/log/nginx/error.log ! -path /var/log/nginx/access.log ! -path '/root/.*' 2>/dev/null || true)
[ -z "$left" ] || fail "after the guide's Remove section, files it made are left: $left"
[ "$(ls -A /etc/nginx/modules-enabled)" = "$before_enabled" ] || fail "/etc/nginx/modules-enabled differs from before"
[ "$(ls -A /usr/lib/nginx/modules)" = "$before_modules" ] || fail "/usr/lib/nginx/modules differs from before"
export PGHOST="$work/pg" PGPORT=$pg_port
dbs=$(runuser -u postgres -- psql -XAtq -c "SELECT string_agg(datname, ' ') FROM pg_database WHERE datname NOT IN ('postgres','template0','template1')")
[ -z "$dbs" ] || fail "after the guide's Remove section, databases are left: $dbs"
roles=$(runuser -u postgres -- psql -XAtq -c "SELECT string_agg(rolname, ' ') FROM pg_roles WHERE rolname !~ '^pg_' AND rolname <> 'postgres'")
[ -z "$roles" ] || fail "after the guide's Remove section, roles are left: $roles"
/usr/sbin/nginx -t -q || fail "the stock nginx.conf fails nginx -t after the guide's Remove section"
sed 's/^/  /' "$transcript"
echo "operator guide test: ok ($nblocks blocks)"
