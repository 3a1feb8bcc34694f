CREATE OR REPLACE FUNCTION mr_fail(p_code text, p_request_id text, p_message text DEFAULT NULL::text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_strip_nulls(jsonb_build_object('outcome', p_code, 'requestId', p_request_id, 'message', p_message))
$function$;
