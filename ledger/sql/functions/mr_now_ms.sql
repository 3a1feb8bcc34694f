CREATE OR REPLACE FUNCTION mr_now_ms()
 RETURNS bigint
 LANGUAGE sql
AS $function$
  SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
$function$;
