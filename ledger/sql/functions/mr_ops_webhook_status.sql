CREATE OR REPLACE FUNCTION mr_ops_webhook_status(p_endpoint_id text, p_status text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  PERFORM mr_refuse_moving(club_id) FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id;
  IF p_status NOT IN ('enabled', 'disabled') THEN RAISE EXCEPTION 'status must be enabled or disabled'; END IF;
  SELECT * INTO v_row FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id AND status <> 'deleted' FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'no webhook endpoint %', p_endpoint_id USING ERRCODE = 'P0002'; END IF;
  IF v_row.status <> p_status THEN PERFORM mr_webhook_set_status(p_endpoint_id, p_status, 'manual'); END IF;
  SELECT * INTO v_row FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id;
  RETURN mr_webhook_endpoint_json(v_row);
END $function$;
