#!/usr/bin/env bash
# layering_test.sh: dependencies point one way (docs/architecture.md,
# Layout). The domain and the libraries beside it (ledger, signing, pg,
# keys, client) include no nginx header and nothing of modules/,
# ngx-boundary/ or lua-free-config/, so what both the modules and mrctl or
# the tests use (the webhook address policy, the request rules) stays
# nginx-free; lua-free-config/ and ngx-boundary/ include nothing of
# modules/. Run from the repository's root.
set -euo pipefail
nginx_or_modules='^\s*#\s*include\s*[<"](modules/|ngx-boundary/|lua-free-config/|ngx_[a-z_]*\.h|nginx\.h)'
rc=0
found=$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' "$nginx_or_modules" \
          ledger signing pg keys client || true)
if [ -n "$found" ]; then
  echo "FAIL: nginx or module headers in the nginx-free libraries:" >&2
  echo "$found" | sed 's/^/  /' >&2
  rc=1
fi
found=$(grep -rnE --include='*.cpp' --include='*.hpp' --include='*.h' '^\s*#\s*include\s*"modules/' \
          lua-free-config ngx-boundary || true)
if [ -n "$found" ]; then
  echo "FAIL: lua-free-config/ or ngx-boundary/ includes modules/:" >&2
  echo "$found" | sed 's/^/  /' >&2
  rc=1
fi
[ $rc -eq 0 ] && echo "ledger, signing, pg, keys and client include no nginx or module header"
exit $rc
