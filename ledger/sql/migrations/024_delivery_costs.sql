-- What a delivery costs the database (issue 26, the settle ratio with an
-- endpoint): no foreign-key row locks, and reports that find their
-- deliveries by index.
--
-- Each foreign key check locks the referenced row FOR KEY
-- SHARE: a settle that queued a delivery locked its own new event row (one
-- more heap write and WAL record in the write path), and every attempt's
-- report locked the event row again, by then committed and cold, so each
-- delivery dirtied an event page and wrote a lock record beside its own
-- rows. 021 dropped the delivery's endpoint check for the same reason; the
-- rest go now. The references hold without the checks:
--   * a delivery's and an attempt's event_no come from the events row read
--     or written in the same statement (mr_emit, the settle batch,
--     mr_webhook_replay, the reports reading the delivery's own event_no);
--   * an attempt's endpoint_id is its delivery's, whose endpoint row the
--     report holds FOR UPDATE; endpoint rows are never deleted (a delete is
--     status 'deleted') except by a club's move, which deletes the club's
--     attempts and deliveries first (020, 022);
--   * events go only through mr_events_prune below and a club's move: the
--     cascades the checks gave the prune are now its own statements.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_no_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_event_no_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_endpoint_id_fkey;

-- 014's prune, deleting the pruned events' deliveries and attempts itself,
-- each as one join (the cascades ran one scan of the referencing table per
-- deleted event: neither table has an index on event_no alone). Deliveries
-- first: deleting one waits for a report in flight, and the attempts'
-- statement, with a snapshot taken after, then sees that report's attempt;
-- a report after the delete finds no delivery and records nothing.
CREATE OR REPLACE FUNCTION mr_events_prune(p_days int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_cutoff timestamptz := now() - p_days * interval '1 day';
  v_n bigint;
BEGIN
  DELETE FROM webhook_deliveries d USING events e WHERE e.event_no = d.event_no AND e.created_at < v_cutoff;
  DELETE FROM webhook_attempts a USING events e WHERE e.event_no = a.event_no AND e.created_at < v_cutoff;
  DELETE FROM events WHERE created_at < v_cutoff;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n;
END $$;

-- 014's mr_webhook_report_batch, finding its deliveries by the ids it was
-- given (delivery_id = ANY (v_ids)) in the set-based path. Joined only to
-- the reports' rows, whose count the planner cannot see (jsonb_array_elements
-- reads as 100 rows), a queue of a few thousand rows already planned as a
-- sequential scan of every delivery, delivered ones included, in every
-- report batch (auto_explain under bench/run_all.sh --only events: 12,360
-- rows scanned for a batch of a few). With the ids as an index condition the
-- scan is the batch's own rows at any queue size. The failure path and the
-- outcomes are 014's.
CREATE OR REPLACE FUNCTION mr_webhook_report_batch(p_reports jsonb, p_schedule_ms int[])
RETURNS TABLE (delivery_id bigint, attempt int, next text)
LANGUAGE plpgsql AS $$
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
             (x->>'ms')::int AS ms, (x->>'ra')::int AS ra
      FROM jsonb_array_elements(p_reports) x
      LEFT JOIN webhook_deliveries w ON w.delivery_id = (x->>'d')::bigint
      ORDER BY w.endpoint_id, (x->>'d')::bigint
    LOOP
      delivery_id := r.d;
      attempt := r.a;
      next := mr_webhook_report(r.d, r.a, r.s, r.e, r.ms, r.ra, p_schedule_ms);
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
    FROM joined j WHERE dl.delivery_id = j.d AND dl.delivery_id = ANY (v_ids) AND j.live
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
END $$;
