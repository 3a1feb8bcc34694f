-- Included (\ir) by the SQL tests that hold the database's function against
-- the one a migration first created: with :landed_file (the migration's
-- file), :landed_fn (the function), :landed_as (a name in pg_temp) and
-- :landed_marks (text its body must hold, so that a moved text fails here
-- rather than compare against nothing), the function as that migration
-- wrote it, from its text, becomes pg_temp.<landed_as>.
\set landed_text `sed -n '/^CREATE FUNCTION ':landed_fn'(/,/^\(END \)\{0,1\}\$\$;/p' :'migrations'/:landed_file`
SELECT (set_config('test.landed_text', :'landed_text', true) || set_config('test.landed_fn', :'landed_fn', true)
        || set_config('test.landed_as', :'landed_as', true)
        || set_config('test.landed_marks', :'landed_marks', true)) IS NOT NULL AS landed_loaded \gset
DO $$
BEGIN
  ASSERT strpos(current_setting('test.landed_text'), current_setting('test.landed_marks')) > 0,
    format('%s as first created, holding "%s", found', current_setting('test.landed_fn'),
           current_setting('test.landed_marks'));
  EXECUTE replace(current_setting('test.landed_text'), 'FUNCTION ' || current_setting('test.landed_fn') || '(',
                  'FUNCTION pg_temp.' || current_setting('test.landed_as') || '(');
END $$;
