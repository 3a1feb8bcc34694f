-- Cuts the extra row a page query fetched to learn whether older ones exist.
CREATE OR REPLACE FUNCTION mr_page(p_rows jsonb, p_ms bigint[], p_limit integer, p_request_id text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT mr_ok('ok', p_request_id, jsonb_build_object(
    'entries', CASE WHEN cardinality(p_ms) > p_limit THEN p_rows - p_limit ELSE p_rows END,
    'nextBefore', CASE WHEN cardinality(p_ms) > p_limit THEN p_ms[p_limit] END))
$function$;
