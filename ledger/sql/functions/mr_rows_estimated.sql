-- Live rows of a table as the statistics system counts them (inserts and
-- deletes as they commit; no scan).
CREATE OR REPLACE FUNCTION mr_rows_estimated(p_table text)
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce((SELECT n_live_tup FROM pg_stat_user_tables WHERE relid = to_regclass(p_table)), 0)
$function$;
