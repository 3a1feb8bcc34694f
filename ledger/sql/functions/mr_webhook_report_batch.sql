CREATE OR REPLACE FUNCTION mr_webhook_report_batch(p_reports jsonb, p_schedule_ms integer[])
 RETURNS TABLE(delivery_id bigint, attempt integer, next text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
  r record;
  v_ids bigint[];
  v_now bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_reports) x
             WHERE (x->>'s')::int IS NULL OR (x->>'s')::int NOT BETWEEN 200 AND 299) THEN
    FOR r IN
      SELECT (x->>'d')::bigint AS d, (x->>'a')::int AS a, (x->>'s')::int AS s, x->>'e' AS e,
             (x->>'ms')::int AS ms, (x->>'ra')::int AS ra, x->>'o' AS o, w.endpoint_id
      FROM jsonb_array_elements(p_reports) x
      LEFT JOIN LATERAL (SELECT w0.endpoint_id FROM webhook_deliveries w0 WHERE w0.delivery_id = (x->>'d')::bigint LIMIT 1) w ON true
      ORDER BY w.endpoint_id, (x->>'d')::bigint
    LOOP
      delivery_id := r.d;
      attempt := r.a;
      next := mr_webhook_report(r.d, r.a, r.s, r.e, r.ms, r.ra, p_schedule_ms);
      -- The operator's detail (o) on the attempt just recorded: the one at
      -- its endpoint's last_attempt_ms, under the endpoint's row lock (a
      -- stale attempt is recorded too; with no endpoint, nothing was).
      IF r.o IS NOT NULL THEN
        UPDATE webhook_attempts a SET detail = r.o
        FROM webhook_endpoints w0
        WHERE w0.endpoint_id = r.endpoint_id AND a.endpoint_id = w0.endpoint_id
          AND a.attempted_ms = w0.last_attempt_ms;
      END IF;
      RETURN NEXT;
    END LOOP;
    RETURN;
  END IF;
  SELECT array_agg((x->>'d')::bigint) INTO v_ids FROM jsonb_array_elements(p_reports) x;
  PERFORM 1 FROM webhook_endpoints w
  WHERE w.endpoint_id IN (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.delivery_id = ANY (v_ids))
  ORDER BY w.endpoint_id FOR UPDATE;
  PERFORM 1 FROM webhook_deliveries d WHERE d.delivery_id = ANY (v_ids) ORDER BY d.delivery_id FOR UPDATE;
  v_now := mr_now_ms();
  RETURN QUERY
  WITH rep AS (
    SELECT (x->>'d')::bigint AS d, (x->>'a')::int AS a, (x->>'s')::int AS s, (x->>'ms')::int AS ms, t.ord
    FROM jsonb_array_elements(p_reports) WITH ORDINALITY t(x, ord)
  ),
  -- Each endpoint's attempts get consecutive times after its last one:
  -- strictly increasing, as one report at a time gives them.
  joined AS (
    SELECT r.d, r.a, r.s, r.ms, dl.endpoint_id, dl.event_no, (dl.state = 'pending' AND dl.attempts = r.a) AS live,
           greatest(v_now, w.last_attempt_ms + 1) + row_number() OVER (PARTITION BY dl.endpoint_id ORDER BY r.ord) - 1
             AS at_ms
    FROM rep r
    JOIN webhook_deliveries dl ON dl.delivery_id = r.d AND dl.delivery_id = ANY (v_ids)
    JOIN webhook_endpoints w ON w.endpoint_id = dl.endpoint_id
  ),
  recorded AS (
    INSERT INTO webhook_attempts (endpoint_id, attempted_ms, event_no, attempt, status, error, duration_ms)
    SELECT j.endpoint_id, j.at_ms, j.event_no, j.a, j.s, NULL, greatest(j.ms, 0) FROM joined j
  ),
  delivered AS (
    UPDATE webhook_deliveries dl SET state = 'delivered', next_at = NULL
    FROM joined j WHERE dl.delivery_id = j.d AND j.live AND dl.delivery_id = ANY (v_ids)
  ),
  endpoints AS (
    UPDATE webhook_endpoints w
    SET last_attempt_ms = m.last, failing_since = CASE WHEN m.any_live THEN NULL ELSE w.failing_since END
    FROM (SELECT j.endpoint_id, max(j.at_ms) AS last, bool_or(j.live) AS any_live FROM joined j
          GROUP BY j.endpoint_id) m
    WHERE w.endpoint_id = m.endpoint_id
  )
  -- Reclaimed after its lease, or its endpoint disabled or deleted: the
  -- attempt is on record, its outcome decides nothing (as one by one).
  SELECT r.d, r.a, CASE WHEN j.live THEN 'delivered' ELSE 'stale' END
  FROM rep r LEFT JOIN joined j ON j.d = r.d;
END $function$;
