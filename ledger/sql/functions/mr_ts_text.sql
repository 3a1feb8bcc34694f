CREATE OR REPLACE FUNCTION mr_ts_text(p_ts timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 STABLE STRICT
AS $function$
  SELECT to_char(p_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$function$;
