CREATE OR REPLACE FUNCTION mr_text_array(p jsonb)
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT coalesce(array_agg(DISTINCT t ORDER BY t), '{}') FROM jsonb_array_elements_text(coalesce(p, '[]')) t
$function$;
