-- Included (\ir) by the SQL tests that hold a function against an earlier
-- text of it, as the contrast that shows the test can fail: with
-- :earlier_fn (the function), :earlier_as (a name in pg_temp) and
-- :earlier_edits (a text[][] of {what the current body says, what the
-- earlier one said}, each found exactly once, so that a changed body fails
-- here rather than compare against nothing), the function's current
-- definition with those edits undone becomes pg_temp.<earlier_as>.
SELECT (set_config('test.earlier_fn', :'earlier_fn', true) || set_config('test.earlier_as', :'earlier_as', true)
        || set_config('test.earlier_edits', :'earlier_edits', true)) IS NOT NULL AS earlier_loaded \gset
DO $$
DECLARE
  v_fn text := current_setting('test.earlier_fn');
  v_edits text[][] := current_setting('test.earlier_edits')::text[][];
  v_def text;
  i int;
BEGIN
  SELECT pg_get_functiondef(p.oid) INTO STRICT v_def FROM pg_proc p
  WHERE p.proname = v_fn AND p.pronamespace = current_schema()::regnamespace;
  FOR i IN 1 .. array_length(v_edits, 1) LOOP
    ASSERT array_length(string_to_array(v_def, v_edits[i][1]), 1) = 2,
      format('%s: "%s" is not in its body exactly once', v_fn, v_edits[i][1]);
    v_def := replace(v_def, v_edits[i][1], v_edits[i][2]);
  END LOOP;
  EXECUTE regexp_replace(v_def, '^CREATE OR REPLACE FUNCTION [a-z_]+\.' || v_fn || '\(',
                         'CREATE FUNCTION pg_temp.' || current_setting('test.earlier_as') || '(');
END $$;
