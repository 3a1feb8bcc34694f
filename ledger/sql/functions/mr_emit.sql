-- An event into the outbox and a delivery for each endpoint that wants it,
-- waking the delivery engines through mr_webhook_wake().
CREATE OR REPLACE FUNCTION mr_emit(p_club_id bigint, p_member_id bigint, p_type text, p_data jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_seq bigint;
  v_external text;
  v_no bigint;
BEGIN
  UPDATE members SET event_seq = event_seq + 1 WHERE member_id = p_member_id
  RETURNING event_seq, external_id INTO v_seq, v_external;
  INSERT INTO events (event_id, club_id, type, data)
  VALUES (mr_new_id('evt_'), p_club_id, p_type,
          p_data || jsonb_build_object('externalMemberId', v_external, 'memberSequence', v_seq))
  RETURNING event_no INTO v_no;
  INSERT INTO webhook_deliveries (endpoint_id, club_id, event_no, next_at)
  SELECT w.endpoint_id, p_club_id, v_no, now() FROM webhook_endpoints w
  WHERE w.club_id = p_club_id AND w.status = 'enabled' AND (w.event_types = '{}' OR p_type = ANY (w.event_types));
  IF FOUND THEN PERFORM mr_webhook_wake(); END IF;
END $function$;
