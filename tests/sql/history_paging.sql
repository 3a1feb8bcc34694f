-- The before/nextBefore cursor (contract section 6): 250 entries written in
-- one transaction (so many share a wall-clock millisecond) page by 100 as
-- 100 + 100 + 50, newest first, each exactly once, nextBefore = createdAt of
-- the last entry returned and null on the last page, also when that page
-- holds exactly the last `limit` entries. Rolled back at the end.

CREATE FUNCTION pg_temp.settle(p_ref text, p_member text, p_tx text, p_amount bigint) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object('partnerRef', p_ref, 'eventId', 'ev-' || p_tx, 'occurredAt', '2026-11-20T10:00:00.5Z',
    'externalMemberId', p_member, 'externalTransactionId', p_tx, 'merchantId', 'shop-1',
    'merchantName', 'Corner Shop', 'amountMinor', p_amount, 'currency', 'GBP',
    'settledAt', '2026-11-21T10:00:00Z')
$$;

-- Pages through a history function, checking every page; returns the ids seen in order.
CREATE FUNCTION pg_temp.walk(p_kind text, p_club bigint, p_member text, p_limit int, p_filter text DEFAULT NULL)
RETURNS text[] LANGUAGE plpgsql AS $$
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
    IF p_kind = 'points' THEN
      r := mr_points(p_club, p_member, p_filter, p_limit, v_before, 'req');
    ELSE
      r := mr_transactions(p_club, p_member, p_limit, v_before, 'req');
    END IF;
    IF r->>'outcome' <> 'ok' THEN RAISE EXCEPTION 'page: %', r; END IF;
    v_pages := v_pages + 1;
    IF jsonb_array_length(r->'data'->'entries') > p_limit THEN RAISE EXCEPTION 'page longer than limit'; END IF;
    FOR e IN SELECT * FROM jsonb_array_elements(r->'data'->'entries') LOOP
      -- createdAt text back to milliseconds: the cursor's unit.
      v_ms := (extract(epoch FROM (e->>'createdAt')::timestamptz) * 1000)::bigint;
      IF e->>'createdAt' !~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$' THEN
        RAISE EXCEPTION 'createdAt format: %', e->>'createdAt';
      END IF;
      IF v_prev_ms IS NOT NULL AND v_ms >= v_prev_ms THEN
        RAISE EXCEPTION 'not strictly newest first: % after %', v_ms, v_prev_ms;
      END IF;
      v_prev_ms := v_ms;
      v_ids := v_ids || coalesce(e->>'id', (e->>'type') || ':' || (e->>'externalTransactionId') || ':' || (e->>'eventId'));
    END LOOP;
    EXIT WHEN r->'data'->'nextBefore' = 'null'::jsonb;
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
  v_ref text := 'sql-paging-' || txid_current();
  v_club bigint;
  v_member bigint;
  v_ids text[];
  r jsonb;
  v_last bigint;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref, 'P', 10000, '{GBP}')
  RETURNING club_id INTO v_club;
  PERFORM mr_pool_topup(v_ref, 1000000);
  ASSERT mr_write('member', v_club, v_ref, 'k-m', 'f', 'r', jsonb_build_object('partnerRef', v_ref,
    'externalMemberId', 'ann', 'firstName', 'A', 'lastName', 'B', 'email', 'a@b.c'))->>'outcome' = 'created';
  SELECT member_id INTO v_member FROM members WHERE club_id = v_club AND external_id = 'ann';
  FOR i IN 1..249 LOOP
    r := mr_write('settle', v_club, v_ref, 'k-' || i, 'f', 'r', pg_temp.settle(v_ref, 'ann', 'tx-' || i, i));
    IF r->>'outcome' <> 'ok' THEN RAISE EXCEPTION 'settle %: %', i, r; END IF;
  END LOOP;
  r := mr_write('reverse', v_club, v_ref, 'k-rev', 'f', 'r', jsonb_build_object('partnerRef', v_ref,
    'eventId', 'rev-1', 'occurredAt', '2026-11-22T10:00:00Z', 'externalMemberId', 'ann',
    'externalTransactionId', 'tx-7', 'amountMinor', 3, 'currency', 'GBP'));
  ASSERT r->>'outcome' = 'ok', r::text;
  ASSERT (SELECT count(DISTINCT created_ms) FROM ledger_entries WHERE member_id = v_member) = 250,
    'every entry its own millisecond';

  -- Points: 250 by 100.
  v_ids := pg_temp.walk('points', v_club, 'ann', 100);
  ASSERT cardinality(v_ids) = 250, format('%s entries paged', cardinality(v_ids));
  ASSERT (SELECT count(DISTINCT x) FROM unnest(v_ids) x) = 250, 'each once';
  ASSERT v_ids = (SELECT array_agg(entry_id ORDER BY created_ms DESC) FROM ledger_entries WHERE member_id = v_member),
    'the ledger, newest first';
  r := mr_points(v_club, 'ann', NULL, 100, NULL, 'req');
  ASSERT jsonb_array_length(r->'data'->'entries') = 100 AND r->'data'->'entries'->0->>'entryType' = 'earn_reversal', r::text;
  r := mr_points(v_club, 'ann', NULL, 100, (r->'data'->>'nextBefore')::bigint, 'req');
  r := mr_points(v_club, 'ann', NULL, 100, (r->'data'->>'nextBefore')::bigint, 'req');
  ASSERT jsonb_array_length(r->'data'->'entries') = 50 AND r->'data'->'nextBefore' = 'null'::jsonb, 'last page of 50';
  -- A page holding exactly the last `limit` entries already says null.
  ASSERT cardinality(pg_temp.walk('points', v_club, 'ann', 50)) = 250, 'by 50: 5 full pages';
  r := mr_points(v_club, 'ann', NULL, 100, (SELECT created_ms FROM ledger_entries WHERE member_id = v_member
                                              ORDER BY created_ms LIMIT 1 OFFSET 100), 'req');
  ASSERT jsonb_array_length(r->'data'->'entries') = 100 AND r->'data'->'nextBefore' = 'null'::jsonb,
    format('exactly the last 100: %s', r->'data'->'nextBefore');
  -- before = the oldest entry: an empty page, nextBefore null.
  SELECT min(created_ms) INTO v_last FROM ledger_entries WHERE member_id = v_member;
  r := mr_points(v_club, 'ann', NULL, 100, v_last, 'req');
  ASSERT r->'data' = '{"entries": [], "nextBefore": null}'::jsonb, r::text;

  -- Filters page the same way.
  ASSERT cardinality(pg_temp.walk('points', v_club, 'ann', 100, 'earned')) = 249, 'earned';
  ASSERT cardinality(pg_temp.walk('points', v_club, 'ann', 100, 'reversed')) = 1, 'reversed';
  ASSERT cardinality(pg_temp.walk('points', v_club, 'ann', 100, 'adjusted')) = 0, 'adjusted';

  -- One earn entry's exact shape.
  r := mr_points(v_club, 'ann', 'earned', 1, NULL, 'req')->'data'->'entries'->0;
  ASSERT r - 'id' - 'createdAt' = jsonb_build_object('entryType', 'earn_award', 'description', 'Points for Corner Shop',
    'pointsDelta', 249, 'pointsDeltaAvailable', 249, 'pointsDeltaReserved', 0, 'cashValueMinor', NULL,
    'currency', 'GBP', 'merchantName', 'Corner Shop', 'merchantId', 'shop-1', 'externalTransactionId', 'tx-249',
    'ledgerGroupId', v_club || ':tx-249'), r::text;
  ASSERT r->>'id' ~ '^le_[0-9a-f]{24}$', r->>'id';

  -- Transactions: 249 settled + 1 reversed = 250 by 100.
  v_ids := pg_temp.walk('transactions', v_club, 'ann', 100);
  ASSERT cardinality(v_ids) = 250 AND (SELECT count(DISTINCT x) FROM unnest(v_ids) x) = 250, 'transactions each once';
  ASSERT v_ids[1] = 'reversed:tx-7:rev-1', v_ids[1];
  r := mr_transactions(v_club, 'ann', 1, NULL, 'req')->'data'->'entries'->0;
  ASSERT r - 'createdAt' = jsonb_build_object('externalTransactionId', 'tx-7', 'type', 'reversed', 'eventId', 'rev-1',
    'merchantId', 'shop-1', 'merchantName', 'Corner Shop', 'amountMinor', 3, 'currency', 'GBP', 'pointsDelta', -3,
    'occurredAt', '2026-11-22T10:00:00.000Z'), r::text;
  r := mr_transactions(v_club, 'ann', 2, NULL, 'req')->'data'->'entries'->1;
  ASSERT r - 'createdAt' = jsonb_build_object('externalTransactionId', 'tx-249', 'type', 'settled',
    'eventId', 'ev-tx-249', 'merchantId', 'shop-1', 'merchantName', 'Corner Shop', 'amountMinor', 249,
    'currency', 'GBP', 'pointsDelta', 249, 'occurredAt', '2026-11-20T10:00:00.500Z',
    'settledAt', '2026-11-21T10:00:00.000Z'), r::text;

  -- An unknown member on every read.
  ASSERT mr_points(v_club, 'nobody', NULL, 10, NULL, 'req')->>'outcome' = 'cardholder_not_found';
  ASSERT mr_transactions(v_club, 'nobody', 10, NULL, 'req')->>'outcome' = 'cardholder_not_found';
  ASSERT mr_balance(v_club, 'nobody', 'req')->>'outcome' = 'cardholder_not_found';
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
