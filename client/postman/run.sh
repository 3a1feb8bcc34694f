#!/usr/bin/env bash
# Runs the Postman collection with newman against a running sandbox.
#
#   client/postman/run.sh           against MR_BASE_URL with MR_KEY_ID, MR_KEY_SECRET,
#                                   MR_PARTNER_REF (read from .run/env when unset)
#   client/postman/run.sh --check   offline: the collection's signing script
#                                   against a local server that re-verifies it
#
# Extra arguments go to newman (e.g. --reporters cli,junit).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

if [ ! -x "$here/node_modules/.bin/newman" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ "${1:-}" = --check ]; then
  exec node "$here/signature-check.js"
fi

if [ -z "${MR_BASE_URL:-}" ] && [ -r "$repo/.run/env" ]; then
  # shellcheck disable=SC1091
  . "$repo/.run/env"
fi
for v in MR_BASE_URL MR_KEY_ID MR_KEY_SECRET MR_PARTNER_REF; do
  [ -n "${!v:-}" ] || { echo "run.sh: $v is not set (source .run/env)" >&2; exit 2; }
done

# The environment as a private file, so the secret is not on a command line.
env_file=$(mktemp)
trap 'rm -f "$env_file"' EXIT
chmod 600 "$env_file"
node -e '
  const e = require(process.argv[1]);
  const set = { baseUrl: process.env.MR_BASE_URL, keyId: process.env.MR_KEY_ID,
                keySecret: process.env.MR_KEY_SECRET, partnerRef: process.env.MR_PARTNER_REF };
  for (const v of e.values) if (v.key in set) v.value = set[v.key];
  process.stdout.write(JSON.stringify(e));
' "$here/member-rewards.postman_environment.json" > "$env_file"

"$here/node_modules/.bin/newman" run "$here/member-rewards.postman_collection.json" \
  --environment "$env_file" --color off "$@"
