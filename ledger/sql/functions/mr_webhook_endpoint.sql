CREATE OR REPLACE FUNCTION mr_webhook_endpoint(p_club_id bigint, p_endpoint_id text, p_request_id text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce(
    (SELECT mr_ok('ok', p_request_id, mr_webhook_endpoint_json(w)) FROM webhook_endpoints w
     WHERE w.endpoint_id = p_endpoint_id AND w.club_id = p_club_id AND w.status <> 'deleted'),
    mr_fail('webhook_endpoint_not_found', p_request_id))
$function$;
