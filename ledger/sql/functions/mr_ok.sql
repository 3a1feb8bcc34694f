CREATE OR REPLACE FUNCTION mr_ok(p_outcome text, p_request_id text, p_data jsonb)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object('outcome', p_outcome, 'requestId', p_request_id, 'data', p_data)
$function$;
