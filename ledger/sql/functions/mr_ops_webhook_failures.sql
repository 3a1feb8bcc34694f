CREATE OR REPLACE FUNCTION mr_ops_webhook_failures(p_ref text, p_limit integer)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce(jsonb_agg(j ORDER BY ms DESC), '[]'::jsonb) FROM (
    SELECT a.attempted_ms AS ms, jsonb_build_object(
             'partnerRef', c.partner_ref, 'endpointId', a.endpoint_id, 'eventId', e.event_id,
             'attempt', a.attempt, 'status', a.status, 'error', a.error, 'detail', a.detail,
             'durationMs', a.duration_ms,
             'attemptedAt', mr_ms_text(a.attempted_ms)) AS j
    FROM webhook_attempts a JOIN webhook_endpoints w USING (endpoint_id) JOIN clubs c USING (club_id)
    JOIN events e USING (event_no)
    WHERE (a.status IS NULL OR a.status NOT BETWEEN 200 AND 299) AND (p_ref IS NULL OR c.partner_ref = p_ref)
    ORDER BY a.attempted_ms DESC LIMIT p_limit) x
$function$;
