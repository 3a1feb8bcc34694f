CREATE OR REPLACE FUNCTION mr_do_webhook_rotate(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  v_row := mr_webhook_endpoint_row(p_club_id, p_cmd->>'endpointId');
  IF v_row.endpoint_id IS NULL THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  UPDATE webhook_endpoints
  SET previous_secret_sealed = secret_sealed, previous_expires_at = clock_timestamp() + interval '24 hours',
      secret_sealed = p_cmd->>'secretSealed', updated_at = clock_timestamp()
  WHERE endpoint_id = v_row.endpoint_id RETURNING * INTO v_row;
  RETURN mr_ok('ok', p_request_id,
               mr_webhook_endpoint_json(v_row) || jsonb_build_object('secretSealed', v_row.secret_sealed));
END $function$;
