CREATE OR REPLACE FUNCTION mr_write_batch_decide(p_batch jsonb)
 RETURNS SETOF jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_key bigint;
  v_club bigint;
  v_now_ms bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_batch) r WHERE r->>0 <> 'settle') THEN
    RAISE EXCEPTION 'only settle is batched' USING ERRCODE = 'MRB01';
  END IF;
  -- The idempotency keys' locks of mr_write, one at a time so the order is certain.
  FOR v_key IN SELECT DISTINCT hashtextextended((r->>1) || ':' || (r->>3), 0)
               FROM jsonb_array_elements(p_batch) r ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(v_key);
  END LOOP;
  -- Then the signatures' keys of mr_write (a signature serves one
  -- idempotency key, contract section 2), in the same order.
  FOR v_key IN SELECT DISTINCT mr_signature_lock_key((r->>7)::bytea)
               FROM jsonb_array_elements(p_batch) r WHERE r->>7 IS NOT NULL ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(v_key);
  END LOOP;
  -- Every lookup below is a LATERAL subquery with LIMIT 1 on a unique key:
  -- the planner cannot know the batch is small (it guesses 100 elements)
  -- and would otherwise hash whole tables (measured: a sequential scan of
  -- transactions per batch). A LIMIT keeps each one an index probe.
  -- ORDER BY under FOR UPDATE: rows are locked as the sort hands them out.
  PERFORM 1 FROM members
  WHERE member_id IN (SELECT m.member_id FROM jsonb_array_elements(p_batch) r
                      CROSS JOIN LATERAL (SELECT member_id FROM members
                                          WHERE club_id = (r->>1)::bigint
                                            AND external_id = r->6->>'externalMemberId' LIMIT 1) m)
  ORDER BY member_id FOR UPDATE;
  -- This connection's stripe of each club in the batch, by club: one
  -- primary-key probe each (a batch almost always holds one club).
  FOR v_club IN SELECT DISTINCT (r->>1)::bigint FROM jsonb_array_elements(p_batch) r ORDER BY 1 LOOP
    PERFORM 1 FROM club_pool_stripes WHERE club_id = v_club AND stripe = mr_pool_stripe() FOR UPDATE;
  END LOOP;
  v_now_ms := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;

  RETURN QUERY
  WITH req AS (
    SELECT e.ord, (e.v->>1)::bigint AS club_id, e.v->>2 AS partner_ref, e.v->>3 AS idem_key,
           e.v->>4 AS fingerprint, e.v->>5 AS request_id, e.v->6 AS cmd, (e.v->>7)::bytea AS signature
    FROM jsonb_array_elements(p_batch) WITH ORDINALITY e(v, ord)
  ),
  decided AS (
    SELECT q.*, i.fingerprint AS kept_fingerprint, i.result AS kept_result, m.member_id, m.available, m.reserved,
           m.last_entry_ms, c.currencies, c.earn_rate_bp,
           mr_award_points((q.cmd->>'amountMinor')::bigint, c.earn_rate_bp) AS points,
           CASE
             WHEN i.fingerprint IS NOT NULL THEN
               CASE WHEN i.fingerprint <> q.fingerprint THEN 'duplicate_idempotency_conflict' ELSE 'replay' END
             WHEN s.used THEN 'invalid_signature'
             WHEN q.cmd->>'partnerRef' IS DISTINCT FROM q.partner_ref THEN 'partner_not_found'
             WHEN m.member_id IS NULL THEN 'cardholder_not_found'
             WHEN m.status = 'closed' THEN 'member_closed'
             WHEN NOT (q.cmd->>'currency' = ANY (c.currencies)) THEN 'unsupported_currency'
             WHEN t.settled THEN 'duplicate_transaction'
             ELSE 'award'
           END AS verdict
    FROM req q
    LEFT JOIN LATERAL (SELECT currencies, earn_rate_bp FROM clubs WHERE club_id = q.club_id LIMIT 1) c ON true
    LEFT JOIN LATERAL (SELECT fingerprint, result FROM idempotency_records
                       WHERE club_id = q.club_id AND idem_key = q.idem_key LIMIT 1) i ON true
    LEFT JOIN LATERAL (SELECT true AS used FROM idempotency_records
                       WHERE signature = q.signature LIMIT 1) s ON true
    LEFT JOIN LATERAL (SELECT member_id, status, available, reserved, last_entry_ms FROM members
                       WHERE club_id = q.club_id AND external_id = q.cmd->>'externalMemberId' LIMIT 1) m ON true
    LEFT JOIN LATERAL (SELECT true AS settled FROM transactions
                       WHERE club_id = q.club_id AND external_id = q.cmd->>'externalTransactionId' LIMIT 1) t ON true
  ),
  awarded AS (
    SELECT d.ord, d.club_id, d.member_id, d.points, d.cmd, d.earn_rate_bp,
           greatest(v_now_ms, d.last_entry_ms + 1)
             + row_number() OVER (PARTITION BY d.member_id ORDER BY d.ord) - 1 AS ms,
           d.available + sum(d.points) OVER (PARTITION BY d.member_id ORDER BY d.ord) AS available_after,
           d.reserved,
           sum(d.points) OVER (PARTITION BY d.club_id ORDER BY d.ord) AS club_drawn
    FROM decided d WHERE d.verdict = 'award'
  ),
  pools AS (
    SELECT s.club_id, sum(s.points) AS total FROM club_pool_stripes s
    WHERE s.club_id IN (SELECT club_id FROM awarded) GROUP BY s.club_id
  ),
  results AS (
    SELECT d.ord, d.club_id, d.idem_key, d.fingerprint, d.signature, d.verdict,
           -- mr_ok and mr_fail (002) written out: they are IMMUTABLE around the
           -- STABLE jsonb_build_object, so PostgreSQL cannot inline them and
           -- runs each call as a query of its own.
           CASE d.verdict
             WHEN 'replay' THEN d.kept_result || '{"replayed": true}'
             WHEN 'award' THEN jsonb_build_object('outcome', 'ok', 'requestId', d.request_id, 'data', jsonb_build_object(
               'eventId', d.cmd->>'eventId', 'status', 'processed',
               'externalTransactionId', d.cmd->>'externalTransactionId', 'pointsAwarded', d.points,
               'balances', jsonb_build_object('pointsBalance', a.available_after::bigint,
                                              'reservedPointsBalance', a.reserved),
               'partner', jsonb_build_object('availablePointsPool', (p.total - a.club_drawn)::bigint),
               'ledgerGroupId', 'settled:' || d.club_id || ':' || (d.cmd->>'externalTransactionId')))
             ELSE jsonb_strip_nulls(jsonb_build_object('outcome', d.verdict, 'requestId', d.request_id, 'message',
               CASE d.verdict WHEN 'unsupported_currency'
                 THEN 'The club supports ' || array_to_string(d.currencies, ', ') || '.'
                 WHEN 'invalid_signature'
                 THEN 'This signature was already used with another X-MR-Idempotency-Key; sign the request again.'
               END))
           END AS result
    FROM decided d
    LEFT JOIN awarded a ON a.ord = d.ord
    LEFT JOIN pools p ON p.club_id = d.club_id
  ),
  member_moves AS (
    UPDATE members m SET last_entry_ms = g.last_ms, available = m.available + g.points,
                         lifetime_earned = m.lifetime_earned + g.points, updated_at = now()
    FROM (SELECT member_id, max(ms) AS last_ms, sum(points) AS points FROM awarded GROUP BY member_id) g
    WHERE m.member_id = g.member_id
  ),
  stripe_draws AS (
    UPDATE club_pool_stripes s SET points = s.points - g.points
    FROM (SELECT club_id, mr_pool_stripe() AS stripe, sum(points) AS points
          FROM awarded GROUP BY 1) g
    WHERE s.club_id = g.club_id AND s.stripe = g.stripe AND g.points <> 0
  ),
  entries AS (
    INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available,
                                delta_reserved, cash_value_minor, currency, merchant_name, merchant_id,
                                external_tx_id, group_ref, created_ms)
    SELECT 'le_' || lpad(to_hex(a.ms), 12, '0') || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12),
           a.member_id, a.club_id, 'earn_award', 'Points for ' || (a.cmd->>'merchantName'), a.points, 0, NULL,
           a.cmd->>'currency', a.cmd->>'merchantName', a.cmd->>'merchantId',
           a.cmd->>'externalTransactionId', a.cmd->>'externalTransactionId', a.ms
    FROM awarded a
  ),
  settled AS (
    INSERT INTO transactions (club_id, member_id, external_id, event_id, merchant_id, merchant_name,
                              amount_minor, currency, rate_bp, points, occurred_at, settled_at, created_ms)
    SELECT a.club_id, a.member_id, a.cmd->>'externalTransactionId', a.cmd->>'eventId', a.cmd->>'merchantId',
           a.cmd->>'merchantName', (a.cmd->>'amountMinor')::bigint, a.cmd->>'currency', a.earn_rate_bp, a.points,
           (a.cmd->>'occurredAt')::timestamptz, (a.cmd->>'settledAt')::timestamptz, a.ms
    FROM awarded a
  ),
  records AS (
    INSERT INTO idempotency_records (club_id, idem_key, fingerprint, result, signature)
    SELECT r.club_id, r.idem_key, r.fingerprint, r.result, r.signature FROM results r
    WHERE r.verdict NOT IN ('replay', 'duplicate_idempotency_conflict', 'invalid_signature')
  )
  SELECT r.result FROM results r ORDER BY r.ord;
END $function$;
