#!/usr/bin/env bash
# run_sql_test.sh <test.env> <file.sql>: runs one SQL assertion script
# against the fixture's migrated database; any error fails the test. The
# script finds its includes beside it (\\ir).
#
# The scripts assert with PL/pgSQL's ASSERT, which does nothing while
# plpgsql.check_asserts is off (postgresql.conf, ALTER DATABASE/ROLE SET or
# PGOPTIONS can turn it off): every script would pass. So the script's own
# session shows the setting, refuses to go on unless it is on, and checks
# again after the script (which could have SET it off).
set -euo pipefail
source "$1"
# A DO block loads PL/pgSQL, which defines the setting: SHOW knows it after.
require_asserts=$(cat <<'SQL'
DO $$ BEGIN
  IF current_setting('plpgsql.check_asserts') IS DISTINCT FROM 'on' THEN
    RAISE EXCEPTION 'plpgsql.check_asserts is %: the ASSERTs of this script would not run',
      current_setting('plpgsql.check_asserts');
  END IF;
END $$
SQL
)
psql "$MR_DSN" -X -q -v ON_ERROR_STOP=1 \
  -c 'DO $$ BEGIN END $$' -c 'SHOW plpgsql.check_asserts' -c "$require_asserts" \
  -f "$2" \
  -c "$require_asserts"
