-- Webhook wake-ups without a NOTIFY in every write (issue 26, the settle
-- ratio). PostgreSQL serialises the commits of notifying transactions (a
-- transaction with a pending NOTIFY takes one database-wide lock before
-- its commit record and holds it until its commit is flushed), so 014's
-- pg_notify in every write that queued a delivery took group commit away
-- from settles exactly when a club has an endpoint: each such commit waited
-- for the one before it, fsync included, and every worker's LISTEN woke
-- for each (docs/events-design.md, Delivery).
--
-- Now a worker whose claim took deliveries promises to claim again every
-- 50 ms for the next 2 s (modules/webhooks/delivery_engine.cpp, kAwakeMs),
-- and says so here: webhook_pollers.until, written by its claim
-- (mr_webhook_claim_awake). A write that queues a delivery
-- notifies only when no such promise runs at least another 500 ms (its
-- commit is expected within that margin), so under a steady stream the
-- claims of the awake workers pick the deliveries up and nothing notifies;
-- the first write after a quiet spell notifies as before. The slow poll
-- still covers whatever slips through (a worker killed while it promised,
-- a commit slower than the margin). Unlogged: a crash leaves no row, and
-- then every write notifies until a claim takes something again.
CREATE UNLOGGED TABLE webhook_pollers (
  one   boolean PRIMARY KEY DEFAULT true CHECK (one),
  until timestamptz NOT NULL
);
INSERT INTO webhook_pollers (until) VALUES ('-infinity');

-- Instead of pg_notify('mr_webhooks', '') after queueing a delivery.
CREATE FUNCTION mr_webhook_wake() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhook_pollers WHERE until > clock_timestamp() + interval '500 ms') THEN
    PERFORM pg_notify('mr_webhooks', '');
  END IF;
END $$;

-- 014's mr_emit, waking through mr_webhook_wake().
CREATE OR REPLACE FUNCTION mr_emit(p_club_id bigint, p_member_id bigint, p_type text, p_data jsonb) RETURNS void
LANGUAGE plpgsql AS $$
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
END $$;

-- 014's settle batch (mr_write_batch until 020's pause wrapped it as
-- mr_write_batch_unpaused), waking through mr_webhook_wake(); put in its
-- place below.
CREATE FUNCTION mr_write_batch_events(p_batch jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_results jsonb[];
  v_queued int;
BEGIN
  SELECT array_agg(r ORDER BY ord) INTO v_results FROM mr_write_batch_decide(p_batch) WITH ORDINALITY t(r, ord);
  WITH awarded AS (
    SELECT o.ord, (b.v->>1)::bigint AS club_id, m.member_id, o.res->'data' AS data
    FROM unnest(v_results) WITH ORDINALITY o(res, ord)
    JOIN jsonb_array_elements(p_batch) WITH ORDINALITY b(v, ord) ON b.ord = o.ord
    CROSS JOIN LATERAL (SELECT member_id FROM members
                        WHERE club_id = (b.v->>1)::bigint AND external_id = b.v->6->>'externalMemberId'
                        LIMIT 1) m
    WHERE o.res->>'outcome' = 'ok' AND NOT o.res ? 'replayed'
  ),
  counted AS (
    SELECT member_id, count(*) AS n FROM awarded GROUP BY member_id
  ),
  sequenced AS (
    UPDATE members m SET event_seq = m.event_seq + c.n FROM counted c WHERE m.member_id = c.member_id
    RETURNING m.member_id, m.event_seq - c.n AS base, m.external_id
  ),
  written AS (
    INSERT INTO events (event_id, club_id, type, data)
    SELECT mr_new_id('evt_'), a.club_id, 'transaction.settled', jsonb_build_object(
             'eventId', a.data->'eventId', 'externalTransactionId', a.data->'externalTransactionId',
             'pointsAwarded', a.data->'pointsAwarded', 'balances', a.data->'balances',
             'ledgerGroupId', a.data->'ledgerGroupId', 'externalMemberId', s.external_id,
             'memberSequence', s.base + row_number() OVER (PARTITION BY a.member_id ORDER BY a.ord))
    FROM awarded a JOIN sequenced s USING (member_id)
    ORDER BY a.ord
    RETURNING event_no, club_id
  ),
  queued AS (
    INSERT INTO webhook_deliveries (endpoint_id, club_id, event_no, next_at)
    SELECT w.endpoint_id, e.club_id, e.event_no, now() FROM written e
    JOIN webhook_endpoints w ON w.club_id = e.club_id AND w.status = 'enabled'
                            AND (w.event_types = '{}' OR 'transaction.settled' = ANY (w.event_types))
    RETURNING 1
  )
  SELECT count(*) INTO v_queued FROM queued;
  IF v_queued > 0 THEN PERFORM mr_webhook_wake(); END IF;
  RETURN QUERY SELECT unnest(v_results);
END $$;

-- The batch's body is 014's mr_write_batch, or mr_write_batch_unpaused
-- where 020's pause wraps it: whichever it is now calls the one above.
DO $$
BEGIN
  EXECUTE format('CREATE OR REPLACE FUNCTION %s(p_batch jsonb) RETURNS SETOF jsonb LANGUAGE sql AS %L',
                 CASE WHEN to_regprocedure('mr_write_batch_unpaused(jsonb)') IS NULL THEN 'mr_write_batch'
                      ELSE 'mr_write_batch_unpaused' END,
                 'SELECT mr_write_batch_events(p_batch)');
END $$;

-- The claim the modules call: mr_webhook_claim's (014, 020), and when it
-- took deliveries the promise renewed (at most about twice a second: the
-- row is one for every worker, and it is locked only when it is renewed).
-- After a crash emptied the table, the row comes back.
CREATE FUNCTION mr_webhook_claim_awake(p_environment text, p_limit int, p_lease_ms int)
RETURNS TABLE (delivery_id bigint, attempt int, endpoint_id text, url text, secrets_sealed text[],
               event_id text, body text)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM mr_webhook_claim(p_environment, p_limit, p_lease_ms);
  IF FOUND THEN
    UPDATE webhook_pollers SET until = clock_timestamp() + interval '2 s'
    WHERE until < clock_timestamp() + interval '1500 ms';
    INSERT INTO webhook_pollers (until)
    SELECT clock_timestamp() + interval '2 s' WHERE NOT EXISTS (SELECT 1 FROM webhook_pollers)
    ON CONFLICT DO NOTHING;
  END IF;
END $$;

INSERT INTO api_access (object, privilege) VALUES ('mr_webhook_claim_awake(text,integer,integer)', 'execute');

-- Settles no longer lock the endpoint row. The delivery's reference to its
-- endpoint was checked by a foreign key, which locks the referenced row
-- FOR KEY SHARE in the inserting transaction: every settle that queued a
-- delivery locked its club's endpoint row until it committed, and waited
-- for every report, which locks that row FOR UPDATE until its own commit
-- (fsync included). Under 32 settling connections the settles spent more
-- time waiting for reports than anything else (pg_stat_activity sampled:
-- Lock transactionid and tuple; bench/RESULTS.md, Events). The reference
-- holds without the check: an endpoint row is never deleted (a delete is
-- status 'deleted'), and every insert of a delivery takes the endpoint id
-- from the endpoint row it reads in the same statement (mr_emit,
-- mr_write_batch, mr_webhook_replay).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
