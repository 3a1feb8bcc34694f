-- Two things the nginx pool needs to get closer to PostgreSQL's own rate:
--
-- mr_balance_row: the balance as plain columns, rendered by the module
-- (ledger/result_render.cpp) in the order jsonb gave them; building a jsonb
-- in SQL and parsing it again in C++ cost more than the lookup itself.
-- LANGUAGE sql, STABLE, one SELECT: the planner inlines it.
--
-- mr_write_batch: settled transactions that queued on one worker while its
-- connections were busy, run in one statement and one transaction (one
-- commit for all of them). Each element is exactly one mr_write call, in
-- the order given, with its own outcome, its own idempotency record and the
-- contract's order of checks. Lock order is what keeps batches from
-- deadlocking each other and single writes: every lock the batch will need
-- is taken up front, kind by kind and each kind ascending, which is the
-- order single writes take them in (idempotency lock, member, pool stripe):
--   1. every idempotency advisory lock, by key;
--   2. every member row named, by member id;
--   3. every pool stripe those members draw from, by (club, stripe).
-- The mr_write calls then only take locks they already hold. A stripe that
-- cannot cover every award the batch could draw from it would make
-- mr_pool_take consolidate, locking all stripes while holding some (out of
-- order): the batch then refuses with SQLSTATE MRB01 before any write and
-- the module runs its requests one by one. So does any other error: the
-- transaction rolled back, nothing happened.

-- GET /api/v1/members/{id}/balance (mr_balance in 002 as columns).
CREATE FUNCTION mr_balance_row(p_club_id bigint, p_member text)
RETURNS TABLE (external_id text, member_status text, points_balance bigint, reserved_points_balance bigint,
               lifetime_points_earned bigint, lifetime_points_redeemed bigint, currency char(3),
               cash_value_minor numeric)
LANGUAGE sql STABLE AS $$
  SELECT m.external_id, m.status, m.available, m.reserved, m.lifetime_earned, m.lifetime_redeemed,
         c.payout_currency, greatest(m.available, 0)::numeric * coalesce(c.redemption_rate_minor, 0)
  FROM members m JOIN clubs c USING (club_id)
  WHERE m.club_id = p_club_id AND m.external_id = p_member
$$;

-- p_batch: a JSON array of [op, club id, partner ref, idempotency key,
-- fingerprint, request id, command], mr_write's parameters in order. Only
-- 'settle' is batched. Returns one result per element, in order.
CREATE FUNCTION mr_write_batch(p_batch jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_req jsonb;
  v_key bigint;
  v_club bigint;
  v_stripe smallint;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_batch) r WHERE r->>0 <> 'settle') THEN
    RAISE EXCEPTION 'only settle is batched' USING ERRCODE = 'MRB01';
  END IF;
  -- The key of 004's mr_write, one at a time so the order is certain.
  FOR v_key IN SELECT DISTINCT hashtextextended((r->>1) || ':' || (r->>3), 0)
               FROM jsonb_array_elements(p_batch) r ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(v_key);
  END LOOP;
  PERFORM 1 FROM members m
  WHERE (m.club_id, m.external_id) IN (SELECT (r->>1)::bigint, r->6->>'externalMemberId'
                                       FROM jsonb_array_elements(p_batch) r)
  ORDER BY m.member_id FOR UPDATE;
  -- Locked by an update that changes nothing, not FOR UPDATE: mr_pool_take
  -- updates the stripe inside a subtransaction, and a row locked by the
  -- parent then updated by a subtransaction gets a MultiXact, which every
  -- later read of the row must resolve (measured: a quarter of the batch's
  -- CPU in GetMultiXactIdMembers).
  FOR v_club, v_stripe IN SELECT DISTINCT m.club_id, (m.member_id % 16)::smallint
                          FROM jsonb_array_elements(p_batch) r
                          JOIN members m ON m.club_id = (r->>1)::bigint
                                        AND m.external_id = r->6->>'externalMemberId'
                          ORDER BY 1, 2 LOOP
    UPDATE club_pool_stripes SET points = points WHERE club_id = v_club AND stripe = v_stripe;
  END LOOP;
  -- A new snapshot, after the locks: the stripes as they are now. Every
  -- award is counted as if it were made (a refusal before the pool only
  -- leaves more), so the pool's fast path cannot fail inside the batch.
  IF EXISTS (
    SELECT 1
    FROM (SELECT m.club_id, (m.member_id % 16)::smallint AS stripe,
                 sum(mr_award_points((r->6->>'amountMinor')::bigint, c.earn_rate_bp)::numeric) AS need
          FROM jsonb_array_elements(p_batch) r
          JOIN members m ON m.club_id = (r->>1)::bigint AND m.external_id = r->6->>'externalMemberId'
          JOIN clubs c ON c.club_id = m.club_id
          GROUP BY 1, 2) n
    JOIN club_pool_stripes s USING (club_id, stripe)
    WHERE n.need > s.points) THEN
    RAISE EXCEPTION 'a pool stripe cannot cover the batch' USING ERRCODE = 'MRB01';
  END IF;
  FOR v_req IN SELECT value FROM jsonb_array_elements(p_batch) WITH ORDINALITY ORDER BY ordinality LOOP
    RETURN NEXT mr_write(v_req->>0, (v_req->>1)::bigint, v_req->>2, v_req->>3, v_req->>4, v_req->>5, v_req->6);
  END LOOP;
END $$;
