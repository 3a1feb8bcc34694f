-- Every kept event since p_since that the endpoint wants, queued again
-- (once: an event still queued for it is not queued twice).
CREATE OR REPLACE FUNCTION mr_webhook_replay(p_endpoint_id text, p_since timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
  v_matched bigint;
BEGIN
  SELECT * INTO v_row FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id;
  WITH matching AS (
    SELECT e.event_no FROM events e
    WHERE e.club_id = v_row.club_id AND e.created_at >= p_since
      AND (v_row.event_types = '{}' OR e.type = ANY (v_row.event_types))
  ),
  queued AS (
    INSERT INTO webhook_deliveries (endpoint_id, club_id, event_no, next_at, state)
    SELECT v_row.endpoint_id, v_row.club_id, m.event_no, now(),
           CASE WHEN v_row.status = 'enabled' THEN 'pending' ELSE 'paused' END
    FROM matching m
    WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                      WHERE d.endpoint_id = v_row.endpoint_id AND d.event_no = m.event_no
                        AND d.state IN ('pending', 'paused'))
    RETURNING 1
  )
  -- queued runs whether or not it is read (a data-modifying WITH always does).
  SELECT count(*) INTO v_matched FROM matching;
  IF v_row.status = 'enabled' AND v_matched > 0 THEN PERFORM pg_notify('mr_webhooks', ''); END IF;
  RETURN v_matched;
END $function$;
