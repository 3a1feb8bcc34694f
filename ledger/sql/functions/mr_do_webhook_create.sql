CREATE OR REPLACE FUNCTION mr_do_webhook_create(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  -- The club row serialises creations, so the limit holds under concurrency.
  PERFORM 1 FROM clubs WHERE club_id = p_club_id FOR UPDATE;
  IF (SELECT count(*) FROM webhook_endpoints WHERE club_id = p_club_id AND status <> 'deleted') >= 16 THEN
    RETURN mr_invalid(p_request_id, 'A club has at most 16 webhook endpoints; delete one first.', 'url',
                      'would be the 17th endpoint of the club');
  END IF;
  INSERT INTO webhook_endpoints (endpoint_id, club_id, url, event_types, description, secret_sealed)
  VALUES (p_cmd->>'endpointId', p_club_id, p_cmd->>'url', mr_text_array(p_cmd->'eventTypes'),
          p_cmd->>'description', p_cmd->>'secretSealed')
  RETURNING * INTO v_row;
  RETURN mr_ok('created', p_request_id,
               mr_webhook_endpoint_json(v_row) || jsonb_build_object('secretSealed', v_row.secret_sealed));
END $function$;
