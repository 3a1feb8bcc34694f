-- A history cursor as the index key: no cursor means from the newest.
CREATE OR REPLACE FUNCTION mr_cursor_key(p_before bigint)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT coalesce(p_before, 9223372036854775807)
$function$;
