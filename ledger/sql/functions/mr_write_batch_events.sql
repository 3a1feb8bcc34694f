-- The settle batch and its events, waking through mr_webhook_wake();
-- called by mr_write_batch_unpaused, behind mr_write_batch's refusal of a
-- moving club's settles.
CREATE OR REPLACE FUNCTION mr_write_batch_events(p_batch jsonb)
 RETURNS SETOF jsonb
 LANGUAGE plpgsql
AS $function$
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
END $function$;
