CREATE OR REPLACE FUNCTION mr_hex_bigint(p_hex text)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE STRICT
AS $function$
  SELECT ('x' || p_hex)::bit(64)::bigint
$function$;
