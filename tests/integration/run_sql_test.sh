#!/usr/bin/env bash
# run_sql_test.sh <test.env> <file.sql>: runs one SQL assertion script
# against the fixture's migrated database; any error fails the test.
set -euo pipefail
source "$1"
psql "$MR_DSN" -X -q -v ON_ERROR_STOP=1 -f "$2"
