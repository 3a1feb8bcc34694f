-- The before/nextBefore cursor (contract section 6) on the history reads
-- the API sends (mr_points_rows, mr_points_rows_filtered): 250 entries written in one
-- transaction (so many share a wall-clock millisecond) page by 100 as
-- 100 + 100 + 50, newest first, each exactly once. A read returns at most
-- limit + 1 rows; the extra one only says that an older page exists, so
-- nextBefore (the createdAt of the last entry kept) is exact and null on
-- the last page, also when that page holds exactly the last `limit`
-- entries. An unknown member is no row, an empty page one row of NULLs.
-- The answer's JSON (createdAt's text, nextBefore, field names) is the
-- module's: tests/unit/ledger/history_render_test.cpp and
-- tests/integration/history_compare_test.cpp. Rolled back at the end.

CREATE FUNCTION pg_temp.settle(p_ref text, p_member text, p_tx text, p_amount bigint) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object('partnerRef', p_ref, 'eventId', 'ev-' || p_tx, 'occurredAt', '2026-11-20T10:00:00.5Z',
    'externalMemberId', p_member, 'externalTransactionId', p_tx, 'merchantId', 'shop-1',
    'merchantName', 'Corner Shop', 'amountMinor', p_amount, 'currency', 'GBP',
    'settledAt', '2026-11-21T10:00:00Z')
$$;

-- One page as the module reads it: the rows (the read's createdAt and an
-- id), at most limit + 1 of them, and whether they say no member.
CREATE FUNCTION pg_temp.page(p_kind text, p_club bigint, p_member text, p_limit int, p_before bigint,
                             p_filter text DEFAULT 'all', OUT ms bigint[], OUT ids text[], OUT no_member boolean)
LANGUAGE plpgsql AS $$
BEGIN
  IF p_kind = 'transactions' THEN
    SELECT array_agg(r.created_ms), array_agg((CASE WHEN r.reversed THEN 'reversed' ELSE 'settled' END) || ':' ||
                                              r.external_id || ':' || r.event_id), count(*) = 0
      INTO ms, ids, no_member FROM mr_transactions_rows(p_club, p_member, p_limit, p_before) r;
  ELSIF p_filter = 'all' THEN
    SELECT array_agg(r.created_ms), array_agg(r.entry_id), count(*) = 0
      INTO ms, ids, no_member FROM mr_points_rows(p_club, p_member, p_limit, p_before) r;
  ELSE
    SELECT array_agg(r.created_ms), array_agg(r.entry_id), count(*) = 0
      INTO ms, ids, no_member FROM mr_points_rows_filtered(p_club, p_member, p_filter, p_limit, p_before) r;
  END IF;
  -- One row of NULLs: the member's page is empty.
  IF ms = ARRAY[NULL::bigint] THEN ms := '{}'; ids := '{}'; END IF;
  ms := coalesce(ms, '{}');
  ids := coalesce(ids, '{}');
END $$;

-- Pages through a history as the module does, checking every page; returns
-- the ids seen in order.
CREATE FUNCTION pg_temp.walk(p_kind text, p_club bigint, p_member text, p_limit int, p_filter text DEFAULT 'all')
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_before bigint;
  p record;
  v_ids text[] := '{}';
  v_prev_ms bigint;
  v_pages int := 0;
BEGIN
  LOOP
    p := pg_temp.page(p_kind, p_club, p_member, p_limit, v_before, p_filter);
    IF p.no_member THEN RAISE EXCEPTION 'no member %', p_member; END IF;
    v_pages := v_pages + 1;
    IF cardinality(p.ms) > p_limit + 1 THEN RAISE EXCEPTION 'more than limit + 1 rows'; END IF;
    FOR i IN 1..least(cardinality(p.ms), p_limit) LOOP
      IF v_before IS NOT NULL AND p.ms[i] >= v_before THEN RAISE EXCEPTION 'not older than the cursor'; END IF;
      IF v_prev_ms IS NOT NULL AND p.ms[i] >= v_prev_ms THEN
        RAISE EXCEPTION 'not strictly newest first: % after %', p.ms[i], v_prev_ms;
      END IF;
      v_prev_ms := p.ms[i];
      v_ids := v_ids || p.ids[i];
    END LOOP;
    -- The extra row, when there is one, is older than the page.
    IF cardinality(p.ms) = p_limit + 1 AND p.ms[p_limit + 1] >= p.ms[p_limit] THEN
      RAISE EXCEPTION 'the extra row is not older';
    END IF;
    EXIT WHEN cardinality(p.ms) <= p_limit;  -- nextBefore null
    v_before := p.ms[p_limit];                -- nextBefore: the last createdAt kept
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
  p record;
  e record;
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
  -- The first page: 100 and the extra row; the newest is the reversal.
  p := pg_temp.page('points', v_club, 'ann', 100, NULL);
  ASSERT cardinality(p.ms) = 101 AND p.ids[1] = (SELECT entry_id FROM ledger_entries
                                                WHERE member_id = v_member AND entry_type = 'earn_reversal'), p::text;
  p := pg_temp.page('points', v_club, 'ann', 100, p.ms[100]);
  ASSERT cardinality(p.ms) = 101, 'second page';
  p := pg_temp.page('points', v_club, 'ann', 100, p.ms[100]);
  ASSERT cardinality(p.ms) = 50, 'last page of 50: no extra row, nextBefore null';
  -- A page holding exactly the last `limit` entries has no extra row either.
  ASSERT cardinality(pg_temp.walk('points', v_club, 'ann', 50)) = 250, 'by 50: 5 full pages';
  p := pg_temp.page('points', v_club, 'ann', 100, (SELECT created_ms FROM ledger_entries WHERE member_id = v_member
                                                  ORDER BY created_ms LIMIT 1 OFFSET 100));
  ASSERT cardinality(p.ms) = 100, format('exactly the last 100: %s rows', cardinality(p.ms));
  -- before = the oldest entry: an empty page (the member's row of NULLs).
  SELECT min(created_ms) INTO v_last FROM ledger_entries WHERE member_id = v_member;
  p := pg_temp.page('points', v_club, 'ann', 100, v_last);
  ASSERT cardinality(p.ms) = 0 AND NOT p.no_member, p::text;
  ASSERT (SELECT count(*) FROM mr_points_rows(v_club, 'ann', 100, v_last) x WHERE x IS NULL) = 1, 'one row of NULLs';
  ASSERT (SELECT count(*) FROM mr_transactions_rows(v_club, 'ann', 100, v_last) x WHERE x IS NULL) = 1;
  ASSERT (SELECT count(*) FROM mr_points_rows_filtered(v_club, 'ann', 'earned', 100, v_last) x WHERE x IS NULL) = 1;

  -- Filters page the same way.
  ASSERT cardinality(pg_temp.walk('points', v_club, 'ann', 100, 'earned')) = 249, 'earned';
  ASSERT cardinality(pg_temp.walk('points', v_club, 'ann', 100, 'reversed')) = 1, 'reversed';
  ASSERT cardinality(pg_temp.walk('points', v_club, 'ann', 100, 'adjusted')) = 0, 'adjusted';
  -- The filtered read takes a filter's first and second entry type: a
  -- filter naming a third would lose entries.
  ASSERT (SELECT max(cardinality(mr_filter_types(f)))
          FROM unnest(ARRAY['earned', 'reversed', 'reserved', 'redeemed', 'released', 'adjusted']) f) = 2,
    'every filter names one or two entry types';
  ASSERT (SELECT bool_and(mr_filter_types(f) IS NOT NULL)
          FROM unnest(ARRAY['earned', 'reversed', 'reserved', 'redeemed', 'released', 'adjusted']) f), 'each names one';

  -- One earn entry's exact columns (pointsDelta is available + reserved,
  -- ledgerGroupId club_id:group_ref).
  SELECT * INTO e FROM mr_points_rows_filtered(v_club, 'ann', 'earned', 1, NULL) LIMIT 1;
  ASSERT (e.entry_type, e.description, e.delta_available + e.delta_reserved, e.delta_available, e.delta_reserved,
          e.cash_value_minor, e.currency, e.merchant_name, e.merchant_id, e.external_tx_id,
          e.club_id || ':' || e.group_ref)
       IS NOT DISTINCT FROM ('earn_award', 'Points for Corner Shop', 249::bigint, 249::bigint, 0::bigint, NULL::bigint, 'GBP'::char(3),
          'Corner Shop', 'shop-1', 'tx-249', v_club || ':tx-249'), e::text;
  ASSERT e.entry_id ~ '^le_[0-9a-f]{24}$', e.entry_id;

  -- Transactions: 249 settled + 1 reversed = 250 by 100.
  v_ids := pg_temp.walk('transactions', v_club, 'ann', 100);
  ASSERT cardinality(v_ids) = 250 AND (SELECT count(DISTINCT x) FROM unnest(v_ids) x) = 250, 'transactions each once';
  ASSERT v_ids[1] = 'reversed:tx-7:rev-1', v_ids[1];
  -- A reversal carries the reversed amount, a negative pointsDelta, its
  -- transaction's merchant fields, and no settledAt.
  SELECT * INTO e FROM mr_transactions_rows(v_club, 'ann', 1, NULL) LIMIT 1;
  ASSERT (e.external_id, e.reversed, e.event_id, e.merchant_id, e.merchant_name, e.amount_minor, e.currency,
          e.points_delta, e.occurred_at, e.settled_at)
       IS NOT DISTINCT FROM ('tx-7', true, 'rev-1', 'shop-1', 'Corner Shop', 3::bigint, 'GBP'::char(3), -3::bigint,
          timestamptz '2026-11-22T10:00:00Z', NULL::timestamptz), e::text;
  SELECT * INTO e FROM mr_transactions_rows(v_club, 'ann', 2, NULL) OFFSET 1 LIMIT 1;
  ASSERT (e.external_id, e.reversed, e.event_id, e.merchant_id, e.merchant_name, e.amount_minor, e.currency,
          e.points_delta, e.occurred_at, e.settled_at)
       IS NOT DISTINCT FROM ('tx-249', false, 'ev-tx-249', 'shop-1', 'Corner Shop', 249::bigint, 'GBP'::char(3), 249::bigint,
          timestamptz '2026-11-20T10:00:00.5Z', timestamptz '2026-11-21T10:00:00Z'), e::text;

  -- An unknown member on every read: no row.
  ASSERT (pg_temp.page('points', v_club, 'nobody', 10, NULL)).no_member;
  ASSERT (pg_temp.page('points', v_club, 'nobody', 10, NULL, 'earned')).no_member;
  ASSERT (pg_temp.page('transactions', v_club, 'nobody', 10, NULL)).no_member;
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref || '-other', 'O', 100, '{GBP}')
  RETURNING club_id INTO v_last;
  INSERT INTO members (club_id, external_id, first_name, last_name, email) VALUES (v_last, 'bob', 'B', 'C', 'b@c.d');
  ASSERT (pg_temp.page('points', v_club, 'bob', 10, NULL)).no_member, 'another club''s member';
  ASSERT (pg_temp.page('transactions', v_club, 'bob', 10, NULL)).no_member, 'another club''s member';
  ASSERT mr_balance(v_club, 'nobody', 'req')->>'outcome' = 'cardholder_not_found';
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
