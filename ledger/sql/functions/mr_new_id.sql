-- Opaque, time-ordered ids: prefix, milliseconds in hex, random.
CREATE OR REPLACE FUNCTION mr_new_id(p_prefix text)
 RETURNS text
 LANGUAGE sql
AS $function$
  SELECT p_prefix || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
         || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12)
$function$;
