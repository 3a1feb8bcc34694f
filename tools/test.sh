#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test
# (unit, integration, fuzz) with ctest, then the whole suite again under
# ASan and UBSan (tools/sanitize.sh, built while the normal ctest runs;
# MR_SANITIZE=0 skips it). The integration
# fixture starts its own PostgreSQL, Redis and nginx on free loopback ports
# and stops them after. Extra arguments go to both ctest runs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "run as root (apt-get, and PostgreSQL runs as the postgres user)" >&2; exit 2; }
# Where the time goes, for docs/testing.md: seconds since the start.
mark() { echo "test.sh: $1 at ${SECONDS}s"; }
"$repo/tools/deps.sh" --tests
export MR_BUILD_DIR=${MR_BUILD_DIR:-$repo/build}
"$repo/tools/build.sh"
mark "built"
sanitize=${MR_SANITIZE:-1}
if [ "$sanitize" != 0 ]; then
  # The sanitized build overlaps the normal ctest, at a lower priority so
  # the tests' own processes come first; its output is shown after.
  sanitize_log=$(mktemp)
  nice -n 10 "$repo/tools/sanitize.sh" --build-only >"$sanitize_log" 2>&1 &
  sanitize_build=$!
fi
rc=0
# ctest -j: the stacks' tests side by side (they mostly wait on their
# services), each stack's own one after the other (its RESOURCE_LOCK,
# tests/integration/CMakeLists.txt); docs/testing.md.
export MR_CTEST_JOBS=${MR_CTEST_JOBS:-8}
(cd "$MR_BUILD_DIR" && ctest --output-on-failure --timeout 600 -j "$MR_CTEST_JOBS" "$@") || rc=$?
mark "normal ctest done"
if [ "$sanitize" != 0 ]; then
  build_rc=0
  wait "$sanitize_build" || build_rc=$?
  mark "sanitized build done"
  tail -n 20 "$sanitize_log"; rm -f "$sanitize_log"
  [ "$build_rc" -eq 0 ] || { echo "test.sh: the sanitized build failed" >&2; exit 1; }
  [ "$rc" -eq 0 ] || exit "$rc"
  "$repo/tools/sanitize.sh" --no-build "$@"
  mark "sanitized ctest done"
fi
exit "$rc"
