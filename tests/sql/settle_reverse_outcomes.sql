-- Settled and reversed transactions through mr_write: every outcome, the
-- contract's order of checks (section 5: each case also breaks a rule
-- checked later, so the earlier rule must win), exact data objects, and what
-- a refusal leaves behind (nothing). Runs in one transaction rolled back at
-- the end.

\ir include/settle_command.sql

CREATE FUNCTION pg_temp.reverse(p_ref text, p_member text, p_tx text, p_amount bigint,
                                p_currency text DEFAULT 'GBP') RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object('partnerRef', p_ref, 'eventId', 'rev-' || gen_random_uuid(),
    'occurredAt', '2026-11-22T10:00:00Z', 'externalMemberId', p_member, 'externalTransactionId', p_tx,
    'amountMinor', p_amount, 'currency', p_currency, 'reason', 'refund'))
$$;

CREATE FUNCTION pg_temp.member(p_ref text, p_member text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('partnerRef', p_ref, 'externalMemberId', p_member, 'firstName', 'Ann',
                            'lastName', 'Lee', 'email', 'ann@example.com')
$$;

-- One write with a fresh idempotency key; returns its result.
CREATE FUNCTION pg_temp.w(p_op text, p_club bigint, p_ref text, p_cmd jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT mr_write(p_op, p_club, p_ref, 'k-' || gen_random_uuid(), 'fp-' || md5(p_cmd::text), 'req-1', p_cmd)
$$;

CREATE FUNCTION pg_temp.expect(p_result jsonb, p_outcome text, p_what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF p_result->>'outcome' IS DISTINCT FROM p_outcome THEN
    RAISE EXCEPTION '%: expected %, got %', p_what, p_outcome, p_result;
  END IF;
END $$;

DO $$
DECLARE
  v_ref text := 'sql-settle-' || txid_current();
  v_club bigint;
  v_ann bigint;
  r jsonb;
  v_pool bigint;
  v_entries bigint;
  v_txs bigint;
  v_sum bigint := 0;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref, 'S', 150, '{GBP,EUR}')
  RETURNING club_id INTO v_club;
  PERFORM mr_pool_topup(v_ref, 1000);
  PERFORM pg_temp.expect(pg_temp.w('member', v_club, v_ref, pg_temp.member(v_ref, 'ann')), 'created', 'ann');
  PERFORM pg_temp.expect(pg_temp.w('member', v_club, v_ref, pg_temp.member(v_ref, 'bob')), 'created', 'bob');
  PERFORM pg_temp.expect(pg_temp.w('member', v_club, v_ref, pg_temp.member(v_ref, 'cid')), 'created', 'cid');
  PERFORM pg_temp.expect(pg_temp.w('close', v_club, v_ref,
                                   jsonb_build_object('partnerRef', v_ref, 'externalMemberId', 'cid')), 'ok', 'close cid');
  SELECT member_id INTO v_ann FROM members WHERE club_id = v_club AND external_id = 'ann';

  -- A success: the exact data object of contract section 5.
  r := pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'ann', 'tx-1', 1000));
  IF r <> jsonb_build_object('outcome', 'ok', 'requestId', 'req-1', 'data', jsonb_build_object(
      'eventId', 'ev-tx-1', 'status', 'processed', 'externalTransactionId', 'tx-1', 'pointsAwarded', 15,
      'balances', jsonb_build_object('pointsBalance', 15, 'reservedPointsBalance', 0),
      'partner', jsonb_build_object('availablePointsPool', 985),
      'ledgerGroupId', 'settled:' || v_club || ':tx-1')) THEN
    RAISE EXCEPTION 'settle data: %', r;
  END IF;
  ASSERT (SELECT rate_bp FROM transactions WHERE club_id = v_club AND external_id = 'tx-1') = 150, 'rate stored';

  -- A zero-point award is processed and still writes its one earn_award entry.
  r := pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'ann', 'tx-zero', 66));
  PERFORM pg_temp.expect(r, 'ok', 'zero-point award');
  ASSERT (r->'data'->>'pointsAwarded')::bigint = 0, r::text;
  ASSERT (SELECT count(*) FROM ledger_entries WHERE member_id = v_ann AND external_tx_id = 'tx-zero'
          AND entry_type = 'earn_award' AND delta_available = 0) = 1, 'one 0-point entry';

  -- Order of checks for settled transactions. Each refusal changes nothing.
  SELECT mr_pool_total(v_club), (SELECT count(*) FROM ledger_entries WHERE club_id = v_club),
         (SELECT count(*) FROM transactions WHERE club_id = v_club) INTO v_pool, v_entries, v_txs;
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle('another-ref', 'nobody', 'tx-1', 1, 'USD')),
                         'partner_not_found', 'partner before member');
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'nobody', 'tx-1', 1, 'USD')),
                         'cardholder_not_found', 'member before closed/currency/duplicate');
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'cid', 'tx-1', 1, 'USD')),
                         'member_closed', 'closed before currency/duplicate');
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'ann', 'tx-1', 1, 'USD')),
                         'unsupported_currency', 'currency before duplicate');
  -- The id is unique per club: another member settling it is a duplicate too,
  -- and the duplicate wins over a pool that could not cover the award.
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'bob', 'tx-1', 1000000000000)),
                         'duplicate_transaction', 'duplicate before pool');
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'bob', 'tx-big', 1000000000000)),
                         'insufficient_partner_points_pool', 'pool');
  ASSERT mr_pool_total(v_club) = v_pool, 'refusals take nothing from the pool';
  ASSERT (SELECT count(*) FROM ledger_entries WHERE club_id = v_club) = v_entries, 'refusals write no entry';
  ASSERT (SELECT count(*) FROM transactions WHERE club_id = v_club) = v_txs, 'refusals write no transaction';
  -- A refused id stays free: once the pool covers it, it settles.
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'bob', 'tx-big', (v_pool * 10000 + 149) / 150)),
                         'ok', 'award of exactly the whole pool');
  ASSERT mr_pool_total(v_club) = 0, 'pool drained exactly';
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'ann', 'tx-one-more', 67)),
                         'insufficient_partner_points_pool', 'one point over an empty pool');
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'ann', 'tx-free', 66)),
                         'ok', 'a zero-point award needs no pool');
  PERFORM mr_pool_topup(v_ref, 1000);

  -- Reversals: order of checks (section 5).
  PERFORM pg_temp.expect(pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse('another-ref', 'nobody', 'nope', 5, 'USD')),
                         'partner_not_found', 'reverse: partner first');
  PERFORM pg_temp.expect(pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'nobody', 'nope', 5, 'USD')),
                         'cardholder_not_found', 'reverse: member before closed/transaction');
  PERFORM pg_temp.expect(pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'cid', 'nope', 5, 'USD')),
                         'member_closed', 'reverse: closed before transaction');
  PERFORM pg_temp.expect(pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'nope', 5, 'USD')),
                         'transaction_not_found', 'reverse: unknown transaction before currency');
  PERFORM pg_temp.expect(pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'tx-big', 5, 'USD')),
                         'transaction_not_found', 'reverse: another member''s transaction');
  r := pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'tx-1', 5000, 'EUR'));
  PERFORM pg_temp.expect(r, 'invalid_request', 'reverse: currency before exceeds');
  ASSERT r->'details'->0->>'field' = 'transaction.currency', r::text;
  PERFORM pg_temp.expect(pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'tx-1', 1001)),
                         'reversal_exceeds_settled_amount', 'reverse: more than settled');

  -- Partial reversals on the cumulative amount: 333 + 333 + 334 of 1000 at
  -- 150 bp give 4 + 5 + 6 = 15, exactly the award; the pool gets each back.
  v_pool := mr_pool_total(v_club);
  r := pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'tx-1', 333));
  PERFORM pg_temp.expect(r, 'ok', 'first partial');
  v_sum := v_sum + (r->'data'->>'pointsReversed')::bigint;
  ASSERT (r->'data'->>'pointsReversed')::bigint = 4, r::text;
  ASSERT r->'data'->>'ledgerGroupId' = 'reversed:' || v_club || ':tx-1', r::text;
  ASSERT (r->'data'->'partner'->>'availablePointsPool')::bigint = v_pool + 4, r::text;
  r := pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'tx-1', 333));
  v_sum := v_sum + (r->'data'->>'pointsReversed')::bigint;
  ASSERT (r->'data'->>'pointsReversed')::bigint = 5, r::text;
  PERFORM pg_temp.expect(pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'tx-1', 335)),
                         'reversal_exceeds_settled_amount', 'cumulative above the settled amount');
  -- Without an amount, the remaining 334 is reversed.
  r := pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'tx-1', NULL));
  PERFORM pg_temp.expect(r, 'ok', 'remaining amount');
  v_sum := v_sum + (r->'data'->>'pointsReversed')::bigint;
  ASSERT v_sum = 15, format('partial reversals sum to %s, not the award 15', v_sum);
  ASSERT (SELECT reversed_amount = amount_minor AND reversed_points = points FROM transactions
          WHERE club_id = v_club AND external_id = 'tx-1'), 'fully reversed';
  ASSERT mr_pool_total(v_club) = v_pool + 15, 'every reversed point went back to the pool';
  ASSERT (SELECT sum(rv.amount_minor) FROM reversals rv JOIN transactions t USING (tx_id)
          WHERE t.club_id = v_club AND t.external_id = 'tx-1') = 1000, 'three reversal rows';
  -- Nothing left: already reversed, with or without an amount (before exceeds).
  PERFORM pg_temp.expect(pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'tx-1', NULL)),
                         'transaction_already_reversed', 'nothing left, no amount');
  PERFORM pg_temp.expect(pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'ann', 'tx-1', 1)),
                         'transaction_already_reversed', 'nothing left, with an amount');
  -- A settled id cannot be settled again even after a full reversal.
  PERFORM pg_temp.expect(pg_temp.w('settle', v_club, v_ref, pg_temp.settle(v_ref, 'ann', 'tx-1', 1000)),
                         'duplicate_transaction', 'settle after reversal');

  -- A reversal may take the available balance below zero.
  PERFORM mr_adjust(v_ref, 'bob', -(SELECT available FROM members WHERE club_id = v_club AND external_id = 'bob'), 'test');
  r := pg_temp.w('reverse', v_club, v_ref, pg_temp.reverse(v_ref, 'bob', 'tx-big', 10000));
  PERFORM pg_temp.expect(r, 'ok', 'reverse into a negative balance');
  ASSERT (r->'data'->'balances'->>'pointsBalance')::bigint = -150, r::text;

  -- The books of this club balance after all of it.
  ASSERT NOT EXISTS (SELECT 1 FROM mr_audit() a WHERE a LIKE '%' || v_ref || '%'),
    (SELECT string_agg(a, '; ') FROM mr_audit() a WHERE a LIKE '%' || v_ref || '%');
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
