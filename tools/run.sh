#!/usr/bin/env bash
# The run command: installs what is missing, builds, and runs the service
# locally under .run/ (own PostgreSQL, Redis and nginx on loopback), with a
# sandbox club and key seeded. Prints a signed example request and writes
# .run/env. Stays in the foreground until Ctrl-C, then stops everything.
#
#   tools/run.sh            set up (or reuse) and run; Ctrl-C stops
#   tools/run.sh --detach   set up and return, leaving it running
#   tools/run.sh stop       stop what a detached run left running
# As root (a fresh Debian 12 has no sudo); any other user: sudo tools/run.sh ...
#
# MR_DOCS=on also installs Node.js and npm and serves the API reference
# page at /docs/. MR_PORT (default 8080) moves the API; MR_PG_PORT, MR_REDIS_PORT and
# MR_OPS_PORT (the ops listener, 8081) likewise. MR_PAYOUT_SIMULATOR=on makes
# sandbox payouts settle by themselves after MR_PAYOUT_SIMULATOR_DELAY (5s);
# by default they wait for an operator (mrctl payout succeed|fail).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$repo/.run
[ -L "$dir" ] && dir=$(readlink -f "$dir")  # see "reach its cluster" below
export MR_BUILD_DIR=${MR_BUILD_DIR:-$repo/build}
export MR_PORT=${MR_PORT:-8080} MR_PG_PORT=${MR_PG_PORT:-15432} MR_REDIS_PORT=${MR_REDIS_PORT:-16379}
# The run command serves the sandbox: partners may finish their own payouts
# (POST /api/v1/test-helpers/redemptions/{id}/payout). MR_TEST_HELPERS=off
# turns that off.
if [ "${MR_ENVIRONMENT:-sandbox}" = sandbox ]; then export MR_TEST_HELPERS=${MR_TEST_HELPERS:-on}; fi

if [ "${1:-}" = stop ]; then
  "$repo/tools/stack.sh" down "$dir/stack"
  echo "stopped"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "run as root (apt-get, and PostgreSQL runs as the postgres user)" >&2; exit 2; }

# The service alone: its packages, and a build without the tests, the fuzz
# targets and the benchmarks (tools/test.sh installs and builds those).
# The API reference page needs Node.js and npm (some 340 Debian packages
# and Redocly's from npm): only when asked for.
if [ "${MR_DOCS:-off}" = on ]; then "$repo/tools/deps.sh" --docs; else "$repo/tools/deps.sh"; fi
MR_TESTS=OFF MR_BENCH=OFF "$repo/tools/build.sh"
# PostgreSQL runs as the postgres user, who must reach its cluster under
# .run: a checkout in root's home (0700 on Debian) keeps the stack in
# /var/lib/mr-run instead, with .run a link to it.
if [ ! -L "$repo/.run" ] && ! runuser -u postgres -- test -x "$repo"; then
  [ -e "$repo/.run" ] && { echo "run.sh: $repo is out of the postgres user's reach; remove $repo/.run and run again" >&2; exit 1; }
  dir=/var/lib/mr-run/$(printf '%s' "$repo" | sha256sum | cut -c1-12)
  mkdir -p "$dir"
  ln -s "$dir" "$repo/.run"
fi
mkdir -p "$dir"
"$repo/tools/stack.sh" up "$dir/stack"
source "$dir/stack/stack.env"
export MR_DSN MR_MASTER_KEY_FILE
mrctl=$MR_MRCTL
ref=sandbox-club

# Seed once: a sandbox club with a funded points pool and cash capacity,
# and one sandbox key whose secret is kept in .run/ (mode 0600).
if ! "$mrctl" club show --ref "$ref" >/dev/null 2>&1; then
  "$mrctl" club create --ref "$ref" --name "Sandbox Club" --earn-rate-bp 100 \
    --redemption-rate-minor 1 --payout-currency GBP --currencies GBP,EUR,USD --min-redemption 100 >/dev/null
  "$mrctl" pool topup --ref "$ref" --points 100000000 >/dev/null
  "$mrctl" capacity topup --ref "$ref" --minor 100000000 >/dev/null
fi
if [ ! -s "$dir/sandbox-key.json" ]; then
  (umask 077; "$mrctl" key issue --ref "$ref" --env sandbox > "$dir/sandbox-key.json")
  "$repo/tools/stack.sh" reload "$dir/stack"
fi
key_id=$(sed -n 's/.*"keyId" *: *"\([^"]*\)".*/\1/p' "$dir/sandbox-key.json")
secret=$(sed -n 's/.*"secret" *: *"\([^"]*\)".*/\1/p' "$dir/sandbox-key.json")

(umask 077; cat > "$dir/env" <<ENV
# Source me: . .run/env
export MR_BASE_URL='$MR_BASE_URL'
export MR_DSN='$MR_DSN'
export MR_MRCTL='$mrctl'
export MR_MASTER_KEY_FILE='$MR_MASTER_KEY_FILE'
export MR_KEY_ID='$key_id'
export MR_KEY_SECRET='$secret'
export MR_PARTNER_REF='$ref'
export MR_RELOAD='$repo/tools/stack.sh reload $dir/stack'
export MR_SIGN='$MR_BUILD_DIR/tools/mr-sign/mr-sign'
export MR_OPS_URL='$MR_OPS_URL'
export MR_OPS_TOKEN_FILE='$MR_OPS_TOKEN_FILE'
ENV
)

body='{"partnerRef":"'$ref'","member":{"externalMemberId":"member-1","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com"}}'
cat <<MSG

Member Rewards Partner API is running at $MR_BASE_URL (sandbox)
  API reference:    $([ -s "$MR_BUILD_DIR/docs/index.html" ] && echo "$MR_BASE_URL/docs/" || echo "docs/api-reference.md (the page: MR_DOCS=on tools/run.sh)")
  environment file: $dir/env      (. .run/env)
  operator tool:    $mrctl
  nginx logs:       $dir/stack/nginx/logs/
  stop:             Ctrl-C, or 'tools/run.sh stop' (as root) after --detach

A signed example request (ready to paste; the timestamp is valid for 5 minutes):

MSG
"$MR_BUILD_DIR/tools/mr-sign/mr-sign" --key-id "$key_id" --secret "$secret" --method POST \
  --path /api/v1/members --body <(printf '%s' "$body") --base-url "$MR_BASE_URL" --print-curl
echo
echo "Or sign and send in one go:"
echo "  . .run/env; echo '$body' | \$MR_SIGN --method POST --path /api/v1/members --body - --send \$MR_BASE_URL"

if [ "${1:-}" = --detach ]; then exit 0; fi
trap '"$repo/tools/stack.sh" down "$dir/stack"; echo; echo stopped; exit 0' INT TERM
echo
echo "Running; Ctrl-C stops PostgreSQL, Redis and nginx."
while sleep 3600; do :; done
