-- GET /api/v1/redemptions (contract section 9, mr_redemptions):
-- redemptions made in one transaction (so many share a wall-clock
-- millisecond), and more after the club's counter was pushed ahead of the
-- clock (so each of those takes the next millisecond, none its own), get
-- distinct createdAt milliseconds in the order they were made and page by
-- any limit newest first, each exactly once, nextBefore = createdAt of the
-- last entry returned and null on the last page. Filters, another club's,
-- duplicate_request_id decided first with the first redemption named, and
-- GET /api/v1/club. Rolled back at the end.

CREATE FUNCTION pg_temp.redeem(p_club bigint, p_ref text, p_member text, p_request text, p_points bigint,
                               p_currency text DEFAULT 'GBP') RETURNS jsonb LANGUAGE sql AS $$
  SELECT mr_write('redeem', p_club, p_ref, 'k-' || p_request || '-' || gen_random_uuid(), 'f', 'r-' || p_request,
                  jsonb_build_object('partnerRef', p_ref, 'requestId', p_request, 'externalMemberId', p_member,
                                     'points', p_points, 'currency', p_currency))
$$;

-- Pages through mr_redemptions, checking every page; the ids in order.
CREATE FUNCTION pg_temp.walk(p_club bigint, p_limit int, p_request text DEFAULT NULL, p_member text DEFAULT NULL,
                             p_status text DEFAULT NULL) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_before bigint;
  r jsonb;
  e jsonb;
  v_ids text[] := '{}';
  v_prev_ms bigint;
  v_ms bigint;
  v_pages int := 0;
BEGIN
  LOOP
    r := mr_redemptions(p_club, p_request, p_member, p_status, p_limit, v_before, 'req');
    IF r->>'outcome' <> 'ok' OR r->>'requestId' <> 'req' THEN RAISE EXCEPTION 'page: %', r; END IF;
    v_pages := v_pages + 1;
    IF jsonb_array_length(r->'data'->'entries') > p_limit THEN RAISE EXCEPTION 'page longer than limit'; END IF;
    IF v_pages > 1 AND jsonb_array_length(r->'data'->'entries') = 0 THEN RAISE EXCEPTION 'an empty page'; END IF;
    FOR e IN SELECT * FROM jsonb_array_elements(r->'data'->'entries') LOOP
      IF e->>'createdAt' !~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$' THEN
        RAISE EXCEPTION 'createdAt format: %', e->>'createdAt';
      END IF;
      v_ms := (extract(epoch FROM (e->>'createdAt')::timestamptz) * 1000)::bigint;
      IF v_before IS NOT NULL AND v_ms >= v_before THEN RAISE EXCEPTION 'not older than the cursor'; END IF;
      IF v_prev_ms IS NOT NULL AND v_ms >= v_prev_ms THEN
        RAISE EXCEPTION 'not strictly newest first: % after %', v_ms, v_prev_ms;
      END IF;
      IF e <> mr_redemption_json(e->>'redemptionId') THEN RAISE EXCEPTION 'not the GET shape: %', e; END IF;
      v_prev_ms := v_ms;
      v_ids := v_ids || (e->>'redemptionId');
    END LOOP;
    EXIT WHEN r->'data'->'nextBefore' = 'null'::jsonb;
    IF jsonb_array_length(r->'data'->'entries') <> p_limit THEN RAISE EXCEPTION 'a short page with nextBefore'; END IF;
    IF (r->'data'->>'nextBefore')::bigint <> v_prev_ms THEN
      RAISE EXCEPTION 'nextBefore % is not the last createdAt %', r->'data'->>'nextBefore', v_prev_ms;
    END IF;
    v_before := (r->'data'->>'nextBefore')::bigint;
    IF v_pages > 1000 THEN RAISE EXCEPTION 'cursor does not end'; END IF;
  END LOOP;
  RETURN v_ids;
END $$;

DO $$
DECLARE
  v_ref text := 'sql-redemptions-' || txid_current();
  v_other text := 'sql-redemptions-other-' || txid_current();
  v_club bigint;
  v_other_club bigint;
  v_ids text[];
  v_made text[] := '{}';
  v_first text;
  r jsonb;
  v_ms bigint;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, redemption_rate_minor, payout_currency, currencies)
  VALUES (v_ref, 'Paging Club', 10000, 2, 'GBP', '{GBP,EUR}') RETURNING club_id INTO v_club;
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies)
  VALUES (v_other, 'Other', 100, '{GBP}') RETURNING club_id INTO v_other_club;
  PERFORM mr_pool_topup(v_ref, 1000000);
  PERFORM mr_capacity_topup(v_ref, 1000000);
  FOREACH r IN ARRAY ARRAY[jsonb_build_object('m', 'ann'), jsonb_build_object('m', 'bob')] LOOP
    ASSERT mr_write('member', v_club, v_ref, 'k-m-' || (r->>'m'), 'f', 'r', jsonb_build_object('partnerRef', v_ref,
      'externalMemberId', r->>'m', 'firstName', 'A', 'lastName', 'B', 'email', 'a@b.c', 'wallet',
      jsonb_build_object('bankAccount', jsonb_build_object('accountNumber', '12345678', 'sortCode', '112233',
                                                           'name', 'A B'))))->>'outcome' = 'created';
    ASSERT mr_write('settle', v_club, v_ref, 'k-s-' || (r->>'m'), 'f', 'r', jsonb_build_object('partnerRef', v_ref,
      'eventId', 'e-' || (r->>'m'), 'occurredAt', '2026-11-20T10:00:00Z', 'externalMemberId', r->>'m',
      'externalTransactionId', 'tx-' || (r->>'m'), 'merchantId', 's', 'merchantName', 'S', 'amountMinor', 100000,
      'currency', 'GBP', 'settledAt', '2026-11-20T10:00:00Z'))->>'outcome' = 'ok';
  END LOOP;

  -- 40 redemptions as fast as one session makes them, alternating members.
  FOR i IN 1..40 LOOP
    r := pg_temp.redeem(v_club, v_ref, CASE WHEN i % 2 = 0 THEN 'ann' ELSE 'bob' END, 'rq-' || i, 10);
    IF r->>'outcome' <> 'accepted' THEN RAISE EXCEPTION 'redeem %: %', i, r; END IF;
    v_made := (r->'data'->>'redemptionId') || v_made;  -- newest first
  END LOOP;
  -- Then 10 with the club's counter an hour ahead of the clock: each takes
  -- the millisecond after the previous one, as in a burst.
  UPDATE clubs SET last_redemption_ms = last_redemption_ms + 3600000 WHERE club_id = v_club
  RETURNING last_redemption_ms INTO v_ms;
  FOR i IN 41..50 LOOP
    r := pg_temp.redeem(v_club, v_ref, 'ann', 'rq-' || i, 10);
    IF r->>'outcome' <> 'accepted' THEN RAISE EXCEPTION 'redeem %: %', i, r; END IF;
    v_made := (r->'data'->>'redemptionId') || v_made;
  END LOOP;
  ASSERT (SELECT array_agg(created_ms - v_ms ORDER BY created_ms) FROM redemptions
          WHERE club_id = v_club AND created_ms > v_ms) = ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]::bigint[],
    'each takes the next millisecond';
  ASSERT (SELECT count(DISTINCT created_ms) FROM redemptions WHERE club_id = v_club) = 50, 'distinct milliseconds';
  ASSERT (SELECT bool_and(created_at = timestamptz 'epoch' + created_ms * interval '1 millisecond'
                          AND updated_at = created_at) FROM redemptions WHERE club_id = v_club),
    'created_at is the millisecond';
  ASSERT (SELECT last_redemption_ms FROM clubs WHERE club_id = v_club) = v_ms + 10, 'the counter';

  -- Every limit pages the same 50, newest first, each once.
  FOREACH v_ms IN ARRAY ARRAY[1, 3, 7, 10, 49, 50, 51, 100]::bigint[] LOOP
    v_ids := pg_temp.walk(v_club, v_ms::int);
    ASSERT v_ids = v_made, format('limit %s: %s of 50, in order: %s', v_ms, cardinality(v_ids), v_ids = v_made);
  END LOOP;
  -- A page holding exactly the last entries already says null.
  r := mr_redemptions(v_club, NULL, NULL, NULL, 50, NULL, 'req');
  ASSERT jsonb_array_length(r->'data'->'entries') = 50 AND r->'data'->'nextBefore' = 'null'::jsonb, 'exact page';
  r := mr_redemptions(v_club, NULL, NULL, NULL, 49, NULL, 'req');
  ASSERT (r->'data'->>'nextBefore')::bigint = (SELECT created_ms FROM redemptions WHERE redemption_id = v_made[49]),
    'nextBefore of a page of 49';
  -- before = the oldest: empty, null.
  r := mr_redemptions(v_club, NULL, NULL, NULL, 10, (SELECT min(created_ms) FROM redemptions WHERE club_id = v_club),
                      'req');
  ASSERT r->'data' = '{"entries": [], "nextBefore": null}'::jsonb, r::text;

  -- Filters page the same way.
  ASSERT pg_temp.walk(v_club, 4, p_member => 'ann') =
         (SELECT array_agg(x ORDER BY n) FROM unnest(v_made) WITH ORDINALITY u (x, n)
          WHERE (SELECT m.external_id FROM redemptions d JOIN members m USING (member_id) WHERE d.redemption_id = x) = 'ann'),
    'ann''s';
  ASSERT cardinality(pg_temp.walk(v_club, 4, p_member => 'bob')) = 20, 'bob''s 20';
  ASSERT pg_temp.walk(v_club, 4, p_member => 'nobody') = '{}', 'an unknown member matches nothing';
  ASSERT pg_temp.walk(v_club, 4, p_request => 'rq-7') = ARRAY[v_made[44]], 'by requestId';
  ASSERT pg_temp.walk(v_club, 4, p_request => 'rq-7', p_member => 'bob') = ARRAY[v_made[44]], 'requestId and member';
  ASSERT pg_temp.walk(v_club, 4, p_request => 'rq-7', p_member => 'ann') = '{}', 'requestId of another member';
  ASSERT pg_temp.walk(v_club, 4, p_request => 'rq-none') = '{}', 'unknown requestId';
  ASSERT cardinality(pg_temp.walk(v_club, 7, p_status => 'payout_pending')) = 50, 'all pending';
  PERFORM mr_payout_move(p.payout_id, 'succeeded') FROM payouts p WHERE p.redemption_id = v_made[3];
  PERFORM mr_payout_move(p.payout_id, 'failed', 'no') FROM payouts p WHERE p.redemption_id = v_made[10];
  ASSERT pg_temp.walk(v_club, 7, p_status => 'completed') = ARRAY[v_made[3]], 'completed';
  ASSERT pg_temp.walk(v_club, 7, p_status => 'failed') = ARRAY[v_made[10]], 'failed';
  ASSERT pg_temp.walk(v_club, 7, p_status => 'payout_pending') = v_made[1:2] || v_made[4:9] || v_made[11:50],
    'pending, in order';
  ASSERT pg_temp.walk(v_club, 7, p_member => 'ann', p_status => 'failed') = ARRAY[v_made[10]], 'ann''s failed';
  ASSERT pg_temp.walk(v_club, 7, p_member => 'bob', p_status => 'failed') = '{}', 'bob has none failed';
  -- Another club sees none of them.
  ASSERT pg_temp.walk(v_other_club, 10) = '{}', 'another club';
  ASSERT pg_temp.walk(v_other_club, 10, p_request => 'rq-7') = '{}', 'another club''s requestId';

  -- duplicate_request_id first: after the balance dropped, for another
  -- member, a closed club setting or a bad currency, it names the first.
  v_first := (SELECT redemption_id FROM redemptions WHERE club_id = v_club AND request_id = 'rq-7');
  r := pg_temp.redeem(v_club, v_ref, 'bob', 'rq-7', 100000000);
  ASSERT r - 'requestId' = jsonb_build_object('outcome', 'duplicate_request_id', 'redemptionId', v_first), r::text;
  r := pg_temp.redeem(v_club, v_ref, 'nobody', 'rq-7', 0, 'XXX');
  ASSERT r->>'outcome' = 'duplicate_request_id' AND r->>'redemptionId' = v_first, r::text;
  UPDATE clubs SET redemption_rate_minor = NULL WHERE club_id = v_club;
  r := pg_temp.redeem(v_club, v_ref, 'bob', 'rq-7', 10);
  ASSERT r->>'outcome' = 'duplicate_request_id' AND r->>'redemptionId' = v_first, r::text;
  r := pg_temp.redeem(v_club, v_ref, 'bob', 'rq-new', 10);
  ASSERT r->>'outcome' = 'partner_configuration_incomplete', r::text;
  UPDATE clubs SET redemption_rate_minor = 2 WHERE club_id = v_club;
  -- The partner check still comes first (mr_write's).
  r := mr_write('redeem', v_club, v_ref, 'k-wrong-ref', 'f', 'r', jsonb_build_object('partnerRef', v_other,
    'requestId', 'rq-7', 'externalMemberId', 'bob', 'points', 10, 'currency', 'GBP'));
  ASSERT r->>'outcome' = 'partner_not_found' AND NOT r ? 'redemptionId', r::text;
  ASSERT (SELECT count(*) FROM redemptions WHERE club_id = v_club) = 50, 'nothing reserved twice';
  ASSERT NOT EXISTS (SELECT FROM mr_audit_club(v_club)), 'the books balance';

  -- GET /api/v1/club: settings, null where not made.
  r := mr_club(v_club, 'sandbox', 'req');
  ASSERT r->>'outcome' = 'ok' AND r->>'requestId' = 'req', r::text;
  ASSERT r->'data' = jsonb_build_object('partnerRef', v_ref, 'name', 'Paging Club', 'environment', 'sandbox',
    'earnRateBasisPoints', 10000, 'redemptionRateMinorPerPoint', 2, 'payoutCurrency', 'GBP',
    'supportedCurrencies', '["GBP", "EUR"]'::jsonb, 'minimumRedemptionPoints', 1,
    'availablePointsPool', mr_pool_total(v_club)), r::text;
  r := mr_club(v_other_club, 'production', 'req');
  ASSERT r->'data'->'redemptionRateMinorPerPoint' = 'null'::jsonb AND r->'data'->'payoutCurrency' = 'null'::jsonb
         AND r->'data'->>'environment' = 'production' AND (r->'data'->>'availablePointsPool')::bigint = 0, r::text;
  ASSERT mr_club(-1, 'sandbox', 'req')->>'outcome' = 'partner_not_found';
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
