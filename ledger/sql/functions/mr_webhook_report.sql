-- What an attempt came to. p_schedule_ms[k] is the wait before attempt k
-- (the first is 0); Retry-After wins when it asks for longer.
CREATE OR REPLACE FUNCTION mr_webhook_report(p_delivery_id bigint, p_attempt integer, p_status integer, p_error text, p_duration_ms integer, p_retry_after_s integer, p_schedule_ms integer[])
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  v_d webhook_deliveries%ROWTYPE;
  v_w webhook_endpoints%ROWTYPE;
  v_ms bigint;
BEGIN
  -- The endpoint first, then the delivery: the order every writer of both
  -- takes (an endpoint's delete, disable or replay locks it, then its
  -- deliveries), so a report and a delete cannot deadlock.
  SELECT * INTO v_w FROM webhook_endpoints
  WHERE endpoint_id = (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.delivery_id = p_delivery_id)
  FOR UPDATE;
  IF NOT FOUND THEN RETURN 'stale'; END IF;
  SELECT * INTO v_d FROM webhook_deliveries WHERE delivery_id = p_delivery_id FOR UPDATE;
  v_ms := greatest(mr_now_ms(), v_w.last_attempt_ms + 1);
  UPDATE webhook_endpoints SET last_attempt_ms = v_ms WHERE endpoint_id = v_w.endpoint_id;
  INSERT INTO webhook_attempts (endpoint_id, attempted_ms, event_no, attempt, status, error, duration_ms)
  VALUES (v_w.endpoint_id, v_ms, v_d.event_no, p_attempt, p_status, p_error, greatest(p_duration_ms, 0));
  -- Reclaimed after its lease ran out (or the endpoint was disabled,
  -- deleted, the delivery replaced): the attempt is on record, its
  -- outcome decides nothing.
  IF v_d.state <> 'pending' OR v_d.attempts <> p_attempt THEN RETURN 'stale'; END IF;
  IF p_status BETWEEN 200 AND 299 THEN
    UPDATE webhook_deliveries SET state = 'delivered', next_at = NULL WHERE delivery_id = p_delivery_id;
    UPDATE webhook_endpoints SET failing_since = NULL WHERE endpoint_id = v_w.endpoint_id;
    RETURN 'delivered';
  END IF;
  IF p_attempt >= coalesce(array_length(p_schedule_ms, 1), 1) THEN
    UPDATE webhook_deliveries SET state = 'exhausted', next_at = NULL WHERE delivery_id = p_delivery_id;
  ELSE
    UPDATE webhook_deliveries
    SET next_at = clock_timestamp()
                  + greatest(p_schedule_ms[p_attempt + 1]::bigint, coalesce(p_retry_after_s, 0) * 1000::bigint)
                    * interval '1 millisecond'
    WHERE delivery_id = p_delivery_id;
  END IF;
  IF p_status = 410 THEN
    PERFORM mr_webhook_set_status(v_w.endpoint_id, 'disabled', 'gone');
    RETURN 'gone';
  END IF;
  UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, clock_timestamp())
  WHERE endpoint_id = v_w.endpoint_id RETURNING * INTO v_w;
  IF v_w.failing_since <= clock_timestamp() - interval '5 days' THEN
    PERFORM mr_webhook_set_status(v_w.endpoint_id, 'disabled', 'failing');
    RETURN 'failing';
  END IF;
  RETURN CASE WHEN p_attempt >= coalesce(array_length(p_schedule_ms, 1), 1) THEN 'exhausted' ELSE 'retry' END;
END $function$;
