CREATE OR REPLACE FUNCTION mr_invalid(p_request_id text, p_message text, p_field text, p_problem text)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT jsonb_build_object('outcome', 'invalid_request', 'requestId', p_request_id, 'message', p_message,
                            'details', jsonb_build_array(jsonb_build_object('field', p_field, 'problem', p_problem)))
$function$;
