#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test
# (unit, integration, fuzz) with ctest, then the whole suite again under
# ASan and UBSan (tools/sanitize.sh; MR_SANITIZE=0 skips it). The integration
# fixture starts its own PostgreSQL, Redis and nginx on free loopback ports
# and stops them after. Extra arguments go to both ctest runs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "run as root (apt-get, and PostgreSQL runs as the postgres user)" >&2; exit 2; }
"$repo/tools/deps.sh"
export MR_BUILD_DIR=${MR_BUILD_DIR:-$repo/build}
"$repo/tools/build.sh"
(cd "$MR_BUILD_DIR" && ctest --output-on-failure --timeout 600 "$@")
if [ "${MR_SANITIZE:-1}" != 0 ]; then
  "$repo/tools/sanitize.sh" "$@"
fi
