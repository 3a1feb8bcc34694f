CREATE OR REPLACE FUNCTION mr_do_webhook_replay(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  v_row := mr_webhook_endpoint_row(p_club_id, p_cmd->>'endpointId');
  IF v_row.endpoint_id IS NULL THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  RETURN mr_ok('ok', p_request_id, jsonb_build_object(
    'endpointId', v_row.endpoint_id,
    'replayed', mr_webhook_replay(v_row.endpoint_id, (p_cmd->>'since')::timestamptz)));
END $function$;
