#!/usr/bin/env bash
# run_settle_bench.sh [--smoke]: the settled-POST lines of bench/run_all.sh
# alone (8 and 32 clients vs pgbench's per-transaction award), on a stack of
# their own with free random ports (they used to take fixed ones, one of
# them the run command's ops listener 8081).
exec "$(dirname "$0")/run_all.sh" --only settle "$@"
