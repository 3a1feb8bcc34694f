#!/usr/bin/env bash
# run_sql_test.sh <test.env> <file.sql>: runs one SQL assertion script
# against the fixture's migrated database; any error fails the test. The
# script finds the migrations' text in the psql variable `migrations`.
set -euo pipefail
source "$1"
migrations=$(cd "$(dirname "$0")/../../ledger/sql/migrations" && pwd)
psql "$MR_DSN" -X -q -v ON_ERROR_STOP=1 -v migrations="$migrations" -f "$2"
