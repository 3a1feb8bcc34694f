-- GET .../deliveries: attempts newest first, paged as histories (mr_page:
-- limit + 1 rows read, nextBefore the last shown one's attemptedAt in ms).
CREATE OR REPLACE FUNCTION mr_webhook_deliveries(p_club_id bigint, p_endpoint_id text, p_limit integer, p_before bigint, p_request_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  v_rows jsonb;
  v_ms bigint[];
BEGIN
  PERFORM 1 FROM webhook_endpoints
  WHERE endpoint_id = p_endpoint_id AND club_id = p_club_id AND status <> 'deleted';
  IF NOT FOUND THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  SELECT coalesce(jsonb_agg(jsonb_build_object(
           'eventId', e.event_id, 'attempt', a.attempt, 'status', a.status, 'error', a.error,
           'durationMs', a.duration_ms, 'attemptedAt', mr_ms_text(a.attempted_ms))
           ORDER BY a.attempted_ms DESC), '[]'::jsonb),
         array_agg(a.attempted_ms ORDER BY a.attempted_ms DESC)
  INTO v_rows, v_ms
  FROM (SELECT * FROM webhook_attempts
        WHERE endpoint_id = p_endpoint_id AND attempted_ms < mr_cursor_key(p_before)
        ORDER BY attempted_ms DESC LIMIT p_limit + 1) a
  JOIN events e USING (event_no);
  RETURN mr_page(v_rows, v_ms, p_limit, p_request_id);
END $function$;
