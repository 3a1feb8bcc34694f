CREATE OR REPLACE FUNCTION mr_ops_webhook_replay(p_endpoint_id text, p_since timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
  PERFORM mr_refuse_moving(club_id) FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id;
  PERFORM 1 FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id AND status <> 'deleted' FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'no webhook endpoint %', p_endpoint_id USING ERRCODE = 'P0002'; END IF;
  RETURN jsonb_build_object('endpointId', p_endpoint_id, 'replayed', mr_webhook_replay(p_endpoint_id, p_since));
END $function$;
