-- What a partner does to one of its endpoints (PATCH, rotate, DELETE,
-- replay): each first finds the endpoint live in the club, locked, or
-- answers webhook_endpoint_not_found.
CREATE OR REPLACE FUNCTION mr_do_webhook_endpoint(p_op text, p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  v_row := mr_webhook_endpoint_row(p_club_id, p_cmd->>'endpointId');
  IF v_row.endpoint_id IS NULL THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  IF p_op = 'webhook_update' THEN
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
  ELSIF p_op = 'webhook_rotate' THEN
    UPDATE webhook_endpoints
    SET previous_secret_sealed = secret_sealed, previous_expires_at = clock_timestamp() + interval '24 hours',
        secret_sealed = p_cmd->>'secretSealed', updated_at = clock_timestamp()
    WHERE endpoint_id = v_row.endpoint_id RETURNING * INTO v_row;
    RETURN mr_ok('ok', p_request_id,
                 mr_webhook_endpoint_json(v_row) || jsonb_build_object('secretSealed', v_row.secret_sealed));
  ELSIF p_op = 'webhook_delete' THEN
    PERFORM mr_webhook_set_status(v_row.endpoint_id, 'deleted', NULL);
    RETURN mr_ok('ok', p_request_id, jsonb_build_object('endpointId', v_row.endpoint_id, 'deleted', true));
  ELSIF p_op = 'webhook_replay' THEN
    RETURN mr_ok('ok', p_request_id, jsonb_build_object(
      'endpointId', v_row.endpoint_id,
      'replayed', mr_webhook_replay(v_row.endpoint_id, (p_cmd->>'since')::timestamptz)));
  END IF;
  RAISE EXCEPTION 'unknown endpoint operation %', p_op;
END $function$;
