#!/usr/bin/env bash
# spectral_lint.sh <openapi.yaml> <tools dir>
# Spectral's spectral:oas recommended rules (tests/docs/spectral/.spectral.yaml)
# over the spec: any result, of any severity, fails. The CLI comes from the
# npm registry at the versions tests/docs/spectral/package-lock.json pins,
# installed into <tools dir> with `npm ci`, again only when the lock changed.
set -euo pipefail
spec=${1:?openapi.yaml} tools=${2:?tools dir}
here=$(cd "$(dirname "$0")/spectral" && pwd)
mkdir -p "$tools"
export npm_config_cache=$tools/npm-cache npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
if ! cmp -s "$here/package-lock.json" "$tools/package-lock.json" || [ ! -x "$tools/node_modules/.bin/spectral" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$tools/"
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
# --fail-severity hint: an info or a hint fails as well as a warning.
exec "$tools/node_modules/.bin/spectral" lint "$spec" --ruleset "$here/.spectral.yaml" --fail-severity hint \
  --format stylish
