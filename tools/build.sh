#!/usr/bin/env bash
# Configures and builds everything into ${MR_BUILD_DIR:-build}.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${MR_BUILD_DIR:-$repo/build}
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=${MR_BUILD_TYPE:-RelWithDebInfo} >/dev/null
cmake --build "$build" -j"$(nproc)"
