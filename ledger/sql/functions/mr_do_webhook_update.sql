CREATE OR REPLACE FUNCTION mr_do_webhook_update(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  v_row := mr_webhook_endpoint_row(p_club_id, p_cmd->>'endpointId');
  IF v_row.endpoint_id IS NULL THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  UPDATE webhook_endpoints
  SET url = coalesce(p_cmd->>'url', url),
      event_types = CASE WHEN p_cmd ? 'eventTypes' THEN mr_text_array(p_cmd->'eventTypes') ELSE event_types END,
      description = CASE WHEN p_cmd ? 'description' THEN p_cmd->>'description' ELSE description END,
      updated_at = clock_timestamp()
  WHERE endpoint_id = v_row.endpoint_id;
  IF p_cmd->>'status' IS DISTINCT FROM NULL AND p_cmd->>'status' <> v_row.status THEN
    PERFORM mr_webhook_set_status(v_row.endpoint_id, p_cmd->>'status', 'manual');
  END IF;
  SELECT * INTO v_row FROM webhook_endpoints WHERE endpoint_id = v_row.endpoint_id;
  RETURN mr_ok('ok', p_request_id, mr_webhook_endpoint_json(v_row));
END $function$;
