-- mr_write_batch_each (023) against mr_write run element by element in the
-- batch's order: the same answers (but for the random redemption and
-- payout ids) and the same balances, capacity and idempotency records, for
-- a batch of reversals holding every reversal outcome (two partial
-- reversals of one transaction, two that do not both fit, one transaction
-- reversed twice, one reversed before, one of nobody's, a replay and a
-- conflict of keys kept before) and a batch of redemptions that runs out
-- of the club's cash capacity half-way. A batch of mixed ops or of settles
-- is refused before it does anything. Runs in one transaction rolled back
-- at the end.
BEGIN;

\ir include/settle_command.sql

CREATE FUNCTION pg_temp.reverse(p_ref text, p_member text, p_tx text, p_amount bigint) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object('partnerRef', p_ref, 'eventId', 'rev-' || p_member || p_tx || coalesce(p_amount::text, 'all'),
    'occurredAt', '2026-11-22T10:00:00Z', 'externalMemberId', p_member, 'externalTransactionId', p_tx,
    'amountMinor', p_amount, 'currency', 'GBP', 'reason', 'refund'))
$$;

CREATE FUNCTION pg_temp.redeem(p_ref text, p_member text, p_request text, p_points bigint) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object('partnerRef', p_ref, 'requestId', p_request, 'externalMemberId', p_member,
                            'points', p_points, 'currency', 'GBP')
$$;

-- One batch element as the module writes it.
CREATE FUNCTION pg_temp.el(p_op text, p_club bigint, p_ref text, p_key text, p_cmd jsonb) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_array(p_op, p_club::text, p_ref, p_key, 'fp-' || md5(p_cmd::text), 'req-' || p_key, p_cmd)
$$;

-- A result without what is random in it (redemption and payout ids).
CREATE FUNCTION pg_temp.stable(p_result jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT CASE WHEN jsonb_typeof(p_result->'data') = 'object'
              THEN jsonb_set(p_result, '{data}', (p_result->'data') - 'redemptionId' - 'payout')
              ELSE p_result END - 'redemptionId'
$$;

-- What the writes left: balances, transactions' reversed amounts, the
-- club's capacity and pool, the records kept and the events written.
CREATE FUNCTION pg_temp.books(p_club bigint) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object(
    'members', (SELECT jsonb_agg(jsonb_build_array(external_id, available, reserved, lifetime_redeemed, event_seq)
                                 ORDER BY external_id) FROM members WHERE club_id = p_club),
    'transactions', (SELECT jsonb_agg(jsonb_build_array(external_id, reversed_amount, reversed_points)
                                      ORDER BY external_id) FROM transactions WHERE club_id = p_club),
    'redemptions', (SELECT jsonb_agg(jsonb_build_array(request_id, points, cash_value_minor) ORDER BY request_id)
                    FROM redemptions WHERE club_id = p_club),
    'capacity', (SELECT cash_capacity_minor FROM clubs WHERE club_id = p_club),
    'pool', mr_pool_total(p_club),
    'records', (SELECT jsonb_agg(jsonb_build_array(idem_key, fingerprint, pg_temp.stable(result)) ORDER BY idem_key)
                FROM idempotency_records WHERE club_id = p_club),
    'events', (SELECT jsonb_agg(type ORDER BY type) FROM events WHERE club_id = p_club))
$$;

-- The batch in a subtransaction rolled back, then the same writes one by
-- one from the same books: the answers, in order, and the books must match.
-- Returns the one-by-one answers.
CREATE FUNCTION pg_temp.compare(p_club bigint, p_batch jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_batch jsonb;
  v_batch_books jsonb;
  v_one jsonb := '[]';
  v_el jsonb;
BEGIN
  BEGIN
    SELECT jsonb_agg(pg_temp.stable(r) ORDER BY ord) INTO v_batch
    FROM mr_write_batch_each(p_batch) WITH ORDINALITY b(r, ord);
    v_batch_books := pg_temp.books(p_club);
    RAISE EXCEPTION USING ERRCODE = 'MRT01';
  EXCEPTION WHEN SQLSTATE 'MRT01' THEN NULL;
  END;
  FOR v_el IN SELECT value FROM jsonb_array_elements(p_batch) WITH ORDINALITY ORDER BY ordinality LOOP
    v_one := v_one || jsonb_build_array(pg_temp.stable(
      mr_write(v_el->>0, (v_el->>1)::bigint, v_el->>2, v_el->>3, v_el->>4, v_el->>5, v_el->6)));
  END LOOP;
  ASSERT v_batch = v_one, format('the batch answered %s, one by one %s', v_batch, v_one);
  ASSERT v_batch_books = pg_temp.books(p_club),
    format('the batch left %s, one by one %s', v_batch_books, pg_temp.books(p_club));
  RETURN v_one;
END $$;

DO $$
DECLARE
  v_ref text := 'sql-each-' || txid_current();
  v_club bigint;
  v_kept jsonb;
  v_r jsonb;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies, redemption_rate_minor, payout_currency,
                     min_redemption_points)
  VALUES (v_ref, 'E', 100, '{GBP}', 1, 'GBP', 100) RETURNING club_id INTO v_club;
  PERFORM mr_pool_topup(v_ref, 1000000);
  INSERT INTO members (club_id, external_id, first_name, last_name, email)
  SELECT v_club, 'm' || i, 'A', 'B', 'a@b.c' FROM generate_series(0, 9) i;
  INSERT INTO wallets (member_id, provider, wallet_ref, account_number, sort_code, account_name)
  SELECT member_id, 'bank', 'w-' || external_id, '12345678', '112233', 'A B' FROM members WHERE club_id = v_club;
  -- m0: t0 of 100 points; m1: t1 of 10; m2: t2 of 20; m3: t3 of 10, reversed
  -- before; m4..m7: 200 points each to redeem; m8: t8 of 7, 3 reversed
  -- under a key kept.
  PERFORM mr_write('settle', v_club, v_ref, 's' || x.m, 'fp', 'r', pg_temp.settle(v_ref, 'm' || x.m, 't' || x.m, x.amount))
  FROM (VALUES (0, 10000), (1, 1000), (2, 2000), (3, 1000), (4, 20000), (5, 20000), (6, 20000), (7, 20000),
               (8, 700)) x(m, amount);
  PERFORM mr_write('reverse', v_club, v_ref, 'before-3', 'fp', 'r', pg_temp.reverse(v_ref, 'm3', 't3', NULL));
  v_kept := pg_temp.reverse(v_ref, 'm8', 't8', 300);
  PERFORM mr_write('reverse', v_club, v_ref, 'kept', 'fp-' || md5(v_kept::text), 'req-kept', v_kept);

  v_r := pg_temp.compare(v_club, jsonb_build_array(
    pg_temp.el('reverse', v_club, v_ref, 'r-partial-30', pg_temp.reverse(v_ref, 'm0', 't0', 3000)),
    pg_temp.el('reverse', v_club, v_ref, 'r-exceed-1', pg_temp.reverse(v_ref, 'm1', 't1', 600)),
    pg_temp.el('reverse', v_club, v_ref, 'r-partial-50', pg_temp.reverse(v_ref, 'm0', 't0', 5000)),
    pg_temp.el('reverse', v_club, v_ref, 'r-exceed-2', pg_temp.reverse(v_ref, 'm1', 't1', 600)),
    pg_temp.el('reverse', v_club, v_ref, 'r-twice-1', pg_temp.reverse(v_ref, 'm2', 't2', NULL)),
    pg_temp.el('reverse', v_club, v_ref, 'r-twice-2', pg_temp.reverse(v_ref, 'm2', 't2', NULL)),
    pg_temp.el('reverse', v_club, v_ref, 'r-done', pg_temp.reverse(v_ref, 'm3', 't3', NULL)),
    pg_temp.el('reverse', v_club, v_ref, 'r-nobody', pg_temp.reverse(v_ref, 'm9', 't0', NULL)),
    pg_temp.el('reverse', v_club, v_ref, 'r-no-member', pg_temp.reverse(v_ref, 'm-none', 't0', NULL)),
    pg_temp.el('reverse', v_club, v_ref, 'r-partner', pg_temp.reverse('other', 'm0', 't0', 100)),
    jsonb_build_array('reverse', v_club::text, v_ref, 'kept', 'fp-' || md5(v_kept::text), 'req-again', v_kept),
    pg_temp.el('reverse', v_club, v_ref, 'kept', pg_temp.reverse(v_ref, 'm8', 't8', 100))));
  ASSERT (SELECT jsonb_agg(coalesce(e->'data'->>'pointsReversed', e->>'outcome')) FROM jsonb_array_elements(v_r) e)
         = '["30", "6", "50", "reversal_exceeds_settled_amount", "20", "transaction_already_reversed",
             "transaction_already_reversed", "transaction_not_found", "cardholder_not_found", "partner_not_found",
             "3", "duplicate_idempotency_conflict"]'::jsonb, v_r::text;
  ASSERT v_r->0->'data'->'balances'->>'pointsBalance' = '70' AND v_r->2->'data'->'balances'->>'pointsBalance' = '20',
    'the second partial reversal sees the first';
  ASSERT v_r->10 ? 'replayed', 'a kept key replays';

  -- Capacity for 500 minor units (1 a point): m4 and m5 take 400, m6's 200
  -- no longer fits, m7's 100 does; m4 then has nothing left; m5's
  -- requestId again; m8 under the minimum.
  UPDATE clubs SET cash_capacity_minor = 500 WHERE club_id = v_club;
  v_r := pg_temp.compare(v_club, jsonb_build_array(
    pg_temp.el('redeem', v_club, v_ref, 'd-4', pg_temp.redeem(v_ref, 'm4', 'q4', 200)),
    pg_temp.el('redeem', v_club, v_ref, 'd-5', pg_temp.redeem(v_ref, 'm5', 'q5', 200)),
    pg_temp.el('redeem', v_club, v_ref, 'd-6', pg_temp.redeem(v_ref, 'm6', 'q6', 200)),
    pg_temp.el('redeem', v_club, v_ref, 'd-7', pg_temp.redeem(v_ref, 'm7', 'q7', 100)),
    pg_temp.el('redeem', v_club, v_ref, 'd-4-again', pg_temp.redeem(v_ref, 'm4', 'q4b', 100)),
    pg_temp.el('redeem', v_club, v_ref, 'd-5-again', pg_temp.redeem(v_ref, 'm5', 'q5', 100)),
    pg_temp.el('redeem', v_club, v_ref, 'd-8', pg_temp.redeem(v_ref, 'm8', 'q8', 50))));
  ASSERT (SELECT jsonb_agg(e->>'outcome') FROM jsonb_array_elements(v_r) e)
         = '["accepted", "accepted", "insufficient_partner_cash_capacity", "accepted", "insufficient_points_balance",
             "duplicate_request_id", "minimum_redemption"]'::jsonb, v_r::text;
  ASSERT (SELECT cash_capacity_minor FROM clubs WHERE club_id = v_club) = 0, 'the capacity is spent exactly';

  -- One op a batch, and never settles.
  BEGIN
    PERFORM mr_write_batch_each(jsonb_build_array(
      pg_temp.el('reverse', v_club, v_ref, 'x-1', pg_temp.reverse(v_ref, 'm0', 't0', 100)),
      pg_temp.el('redeem', v_club, v_ref, 'x-2', pg_temp.redeem(v_ref, 'm6', 'qx', 100))));
    RAISE EXCEPTION 'a batch of two ops ran';
  EXCEPTION WHEN SQLSTATE 'MRB01' THEN NULL;
  END;
  BEGIN
    PERFORM mr_write_batch_each(jsonb_build_array(
      pg_temp.el('settle', v_club, v_ref, 'x-3', pg_temp.settle(v_ref, 'm0', 'tx', 100))));
    RAISE EXCEPTION 'a batch of settles ran';
  EXCEPTION WHEN SQLSTATE 'MRB01' THEN NULL;
  END;
  ASSERT NOT EXISTS (SELECT 1 FROM idempotency_records WHERE club_id = v_club AND idem_key LIKE 'x-%'),
    'a refused batch wrote nothing';
END $$;
ROLLBACK;
