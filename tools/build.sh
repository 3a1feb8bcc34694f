#!/usr/bin/env bash
# Configures and builds into ${MR_BUILD_DIR:-build}: everything, or with
# MR_TESTS=OFF (the run command) the service alone, without the tests and
# the fuzz targets; MR_BENCH=OFF leaves out the benchmarks.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${MR_BUILD_DIR:-$repo/build}
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=${MR_BUILD_TYPE:-RelWithDebInfo} \
  -DMR_TESTS=${MR_TESTS:-ON} -DMR_BENCH=${MR_BENCH:-ON} >/dev/null
cmake --build "$build" -j"$(nproc)"
