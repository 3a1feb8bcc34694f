CREATE OR REPLACE FUNCTION mr_webhook_claim(p_environment text, p_limit integer, p_lease_ms integer)
 RETURNS TABLE(delivery_id bigint, attempt integer, endpoint_id text, url text, secrets_sealed text[], event_id text, body text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH due AS (
    SELECT d.delivery_id FROM webhook_deliveries d
    WHERE d.state = 'pending' AND d.next_at <= clock_timestamp()
      AND NOT EXISTS (SELECT 1 FROM clubs c WHERE c.club_id = d.club_id AND c.moving)
    ORDER BY d.next_at LIMIT p_limit
    FOR UPDATE OF d SKIP LOCKED
  ),
  claimed AS (
    UPDATE webhook_deliveries d
    SET attempts = d.attempts + 1, next_at = clock_timestamp() + p_lease_ms * interval '1 millisecond'
    FROM due WHERE d.delivery_id = due.delivery_id
    RETURNING d.delivery_id, d.attempts, d.endpoint_id, d.event_no
  )
  SELECT c.delivery_id, c.attempts, c.endpoint_id, w.url,
         CASE WHEN w.previous_expires_at > clock_timestamp()
              THEN ARRAY[w.secret_sealed, w.previous_secret_sealed] ELSE ARRAY[w.secret_sealed] END,
         e.event_id,
         jsonb_build_object('id', e.event_id, 'type', e.type, 'createdAt', mr_ts_text(e.created_at),
                            'environment', p_environment, 'data', e.data)::text
  FROM claimed c JOIN webhook_endpoints w ON w.endpoint_id = c.endpoint_id JOIN events e ON e.event_no = c.event_no;
END$function$;
