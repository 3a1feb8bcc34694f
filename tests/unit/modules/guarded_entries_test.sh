#!/usr/bin/env bash
# guarded_entries_test.sh <source dir>...: no exception reaches nginx,
# libpq, hiredis or libcurl by one rule, not by convention: every C entry is
# noexcept and runs its body through modules/common/guarded.hpp, the only
# place that catches everything. A `catch (...)` anywhere else in these
# directories is a hand-written guard this rule replaced: refused.
set -euo pipefail
found=$(grep -rn --include='*.cpp' --include='*.hpp' -E 'catch[[:space:]]*\([[:space:]]*\.\.\.[[:space:]]*\)' "$@" |
  grep -v '^modules/common/guarded\.hpp:' || true)
if [ -n "$found" ]; then
  echo "FAIL: catch (...) outside modules/common/guarded.hpp (use mr::ngx::guarded):" >&2
  echo "$found" | sed 's/^/  /' >&2
  exit 1
fi
echo "every catch-all is guarded()'s"
