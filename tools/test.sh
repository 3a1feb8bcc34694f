#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test
# (unit and integration) with ctest. The integration fixture starts its own
# PostgreSQL, Redis and nginx on free loopback ports and stops them after.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "run as root (apt-get, and PostgreSQL runs as the postgres user)" >&2; exit 2; }
"$repo/tools/deps.sh"
export MR_BUILD_DIR=${MR_BUILD_DIR:-$repo/build}
"$repo/tools/build.sh"
cd "$MR_BUILD_DIR"
ctest --output-on-failure --timeout 600 "$@"
