CREATE OR REPLACE FUNCTION mr_ms_text(p_ms bigint)
 RETURNS text
 LANGUAGE sql
 STABLE STRICT
AS $function$
  SELECT to_char(timestamp 'epoch' + p_ms * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$function$;
