-- A Prometheus label value: backslash, quote and newline escaped.
CREATE OR REPLACE FUNCTION mr_prom_label(p text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT replace(replace(replace(p, E'\\', E'\\\\'), '"', E'\\"'), E'\n', E'\\n')
$function$;
