CREATE OR REPLACE FUNCTION mr_webhook_endpoints(p_club_id bigint, p_request_id text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT mr_ok('ok', p_request_id, jsonb_build_object('entries', coalesce(
    (SELECT jsonb_agg(mr_webhook_endpoint_json(w) ORDER BY w.created_at, w.endpoint_id)
     FROM webhook_endpoints w WHERE w.club_id = p_club_id AND w.status <> 'deleted'), '[]'::jsonb)))
$function$;
