-- mr_write_batch (009, set-based) against mr_write run element by element
-- in the batch's order: the same answers byte for byte and the same books
-- (members, entries in order, transactions, pool stripes, idempotency
-- records), over a batch that holds every settle outcome, a member settled
-- three times and replays of records kept before. Then the cases the batch
-- leaves to the module's one-by-one fallback must fail as a whole and leave
-- nothing behind. Runs in one transaction rolled back at the end.

\ir include/settle_command.sql

-- One batch element as the module writes it: mr_write's parameters, the
-- club id as text.
CREATE FUNCTION pg_temp.el(p_club bigint, p_ref text, p_key text, p_cmd jsonb, p_fp text DEFAULT NULL)
RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_array('settle', p_club::text, p_ref, p_key, coalesce(p_fp, 'fp-' || md5(p_cmd::text)),
                           'req-' || p_key, p_cmd)
$$;

-- Everything a settle writes for one club, without ids and times, plus the
-- links between them that must hold (a transaction's createdAt is its
-- entry's; a member's last_entry_ms is its newest entry's).
CREATE FUNCTION pg_temp.books(p_club bigint) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object(
    'members', (SELECT jsonb_agg(jsonb_build_array(external_id, status, available, reserved, lifetime_earned,
                                                   lifetime_redeemed) ORDER BY external_id)
                FROM members WHERE club_id = p_club),
    'entries', (SELECT jsonb_agg(jsonb_build_array(m.external_id, e.entry_type, e.description, e.delta_available,
                                                   e.delta_reserved, e.currency, e.merchant_name, e.merchant_id,
                                                   e.external_tx_id, e.group_ref) ORDER BY m.external_id, e.created_ms)
                FROM ledger_entries e JOIN members m USING (member_id) WHERE e.club_id = p_club),
    'transactions', (SELECT jsonb_agg(jsonb_build_array(t.external_id, m.external_id, t.event_id, t.merchant_id,
                                                        t.merchant_name, t.amount_minor, t.currency, t.rate_bp,
                                                        t.points, t.occurred_at, t.settled_at)
                                      ORDER BY t.external_id)
                     FROM transactions t JOIN members m USING (member_id) WHERE t.club_id = p_club),
    'unlinked_transactions', (SELECT count(*) FROM transactions t WHERE t.club_id = p_club AND NOT EXISTS (
                                SELECT 1 FROM ledger_entries e WHERE e.member_id = t.member_id
                                  AND e.created_ms = t.created_ms AND e.external_tx_id = t.external_id)),
    'stale_last_entry', (SELECT count(*) FROM members m WHERE m.club_id = p_club AND m.last_entry_ms <>
                           coalesce((SELECT max(created_ms) FROM ledger_entries e WHERE e.member_id = m.member_id), 0)),
    'stripes', (SELECT jsonb_agg(points ORDER BY stripe) FROM club_pool_stripes WHERE club_id = p_club),
    'records', (SELECT jsonb_agg(jsonb_build_array(idem_key, fingerprint, result) ORDER BY idem_key)
                FROM idempotency_records WHERE club_id = p_club))
$$;

-- The batch's error, or 'none'; whatever it did is rolled back.
CREATE FUNCTION pg_temp.batch_error(p_batch jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM count(*) FROM mr_write_batch(p_batch);
  RETURN 'none';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;

DO $$
DECLARE
  v_ref text := 'sql-batch-' || txid_current();
  v_club bigint;
  v_other bigint;
  v_batch jsonb;
  v_batch_results jsonb;
  v_batch_books jsonb;
  v_seq_results jsonb := '[]';
  v_seq_books jsonb;
  v_before jsonb;
  v_el jsonb;
  v_err text;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref, 'B', 150, '{GBP,EUR}')
  RETURNING club_id INTO v_club;
  PERFORM mr_pool_topup(v_ref, 100000);
  PERFORM mr_write('member', v_club, v_ref, 'm-' || x, 'fp', 'req',
                   jsonb_build_object('partnerRef', v_ref, 'externalMemberId', x, 'firstName', 'A',
                                      'lastName', 'B', 'email', 'a@example.com'))
  FROM unnest(ARRAY['ann', 'bob', 'cid', 'dee']) x;
  PERFORM mr_write('close', v_club, v_ref, 'close-cid', 'fp', 'req',
                   jsonb_build_object('partnerRef', v_ref, 'externalMemberId', 'cid'));
  -- Kept before the batch: a settled transaction and its record.
  PERFORM mr_write('settle', v_club, v_ref, 'k-old', 'fp-old', 'req-old', pg_temp.settle(v_ref, 'bob', 'tx-old', 999));

  v_batch := jsonb_build_array(
    pg_temp.el(v_club, v_ref, 'k1', pg_temp.settle(v_ref, 'ann', 'tx-1', 1000)),
    pg_temp.el(v_club, v_ref, 'k2', pg_temp.settle(v_ref, 'bob', 'tx-2', 2050, 'EUR')),
    pg_temp.el(v_club, v_ref, 'k3', pg_temp.settle(v_ref, 'ann', 'tx-3', 333)),
    pg_temp.el(v_club, v_ref, 'k-old', pg_temp.settle(v_ref, 'bob', 'tx-old', 999), 'fp-old'),   -- replay
    pg_temp.el(v_club, v_ref, 'k-old', pg_temp.settle(v_ref, 'bob', 'tx-x', 5), 'fp-other'),   -- conflict
    pg_temp.el(v_club, v_ref, 'k4', pg_temp.settle('another-club', 'ann', 'tx-4', 100)),        -- partner
    pg_temp.el(v_club, v_ref, 'k5', pg_temp.settle(v_ref, 'nobody', 'tx-5', 100)),              -- cardholder
    pg_temp.el(v_club, v_ref, 'k6', pg_temp.settle(v_ref, 'cid', 'tx-6', 100)),                 -- closed
    pg_temp.el(v_club, v_ref, 'k7', pg_temp.settle(v_ref, 'dee', 'tx-7', 100, 'USD')),          -- currency
    pg_temp.el(v_club, v_ref, 'k8', pg_temp.settle(v_ref, 'dee', 'tx-old', 100)),               -- duplicate
    pg_temp.el(v_club, v_ref, 'k9', pg_temp.settle(v_ref, 'dee', 'tx-9', 1)),                   -- 0 points
    pg_temp.el(v_club, v_ref, 'k10', pg_temp.settle(v_ref, 'ann', 'tx-10', 7777)));
  v_before := pg_temp.books(v_club);

  BEGIN
    SELECT jsonb_agg(r ORDER BY n) INTO v_batch_results FROM mr_write_batch(v_batch) WITH ORDINALITY b(r, n);
    v_batch_books := pg_temp.books(v_club);
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'undo the batch';
  EXCEPTION WHEN raise_exception THEN
    IF SQLERRM <> 'undo the batch' THEN RAISE; END IF;
  END;
  IF pg_temp.books(v_club) <> v_before THEN RAISE EXCEPTION 'the batch was not undone'; END IF;

  FOR v_el IN SELECT value FROM jsonb_array_elements(v_batch) WITH ORDINALITY ORDER BY ordinality LOOP
    v_seq_results := v_seq_results || jsonb_build_array(
      mr_write(v_el->>0, (v_el->>1)::bigint, v_el->>2, v_el->>3, v_el->>4, v_el->>5, v_el->6));
  END LOOP;
  v_seq_books := pg_temp.books(v_club);

  IF jsonb_array_length(v_batch_results) <> jsonb_array_length(v_batch) THEN
    RAISE EXCEPTION 'batch gave % results for % elements', jsonb_array_length(v_batch_results),
      jsonb_array_length(v_batch);
  END IF;
  FOR i IN 0 .. jsonb_array_length(v_batch) - 1 LOOP
    IF v_batch_results->i <> v_seq_results->i THEN
      RAISE EXCEPTION 'element %: batch answered %, one by one %', i, v_batch_results->i, v_seq_results->i;
    END IF;
  END LOOP;
  IF v_batch_books <> v_seq_books THEN
    RAISE EXCEPTION 'books differ: batch % one by one %', v_batch_books, v_seq_books;
  END IF;
  -- The comparison means something only if the batch did all of this.
  IF (SELECT count(*) FROM jsonb_array_elements(v_seq_results) r WHERE r->>'outcome' = 'ok') <> 6  -- 5 awards, 1 replay
     OR v_seq_books->'unlinked_transactions' <> '0' OR v_seq_books->'stale_last_entry' <> '0'
     OR (SELECT array_agg(DISTINCT r->>'outcome' ORDER BY r->>'outcome') FROM jsonb_array_elements(v_seq_results) r)
        <> ARRAY['cardholder_not_found', 'duplicate_idempotency_conflict', 'duplicate_transaction', 'member_closed',
                 'ok', 'partner_not_found', 'unsupported_currency']
     OR v_seq_results->3->>'replayed' IS DISTINCT FROM 'true'
     -- ann's third award shows all three, each rounded down on its own: 15 + 4 + 116.
     OR (v_seq_results->11->'data'->'balances'->>'pointsBalance')::bigint <> 135
  THEN
    RAISE EXCEPTION 'the batch did not cover what it should: %', v_seq_results;
  END IF;

  -- Left to the fallback: the whole batch fails, nothing is written.
  v_before := pg_temp.books(v_club);
  v_err := pg_temp.batch_error(jsonb_build_array(
    pg_temp.el(v_club, v_ref, 'k-twice', pg_temp.settle(v_ref, 'ann', 'tx-a', 100)),
    pg_temp.el(v_club, v_ref, 'k-twice', pg_temp.settle(v_ref, 'ann', 'tx-a', 100))));
  IF v_err <> '23505' THEN RAISE EXCEPTION 'one key twice in a batch: %', v_err; END IF;
  v_err := pg_temp.batch_error(jsonb_build_array(
    pg_temp.el(v_club, v_ref, 'k-tx-1', pg_temp.settle(v_ref, 'ann', 'tx-twice', 100)),
    pg_temp.el(v_club, v_ref, 'k-tx-2', pg_temp.settle(v_ref, 'bob', 'tx-twice', 100))));
  IF v_err <> '23505' THEN RAISE EXCEPTION 'one transaction twice in a batch: %', v_err; END IF;
  v_err := pg_temp.batch_error(jsonb_build_array(jsonb_set(
    pg_temp.el(v_club, v_ref, 'k-mix', pg_temp.settle(v_ref, 'ann', 'tx-m', 100)), '{0}', '"reverse"')));
  IF v_err <> 'MRB01' THEN RAISE EXCEPTION 'a reversal in a batch: %', v_err; END IF;
  -- A stripe that cannot cover its awards though the pool can: the stripe's
  -- CHECK refuses, and mr_write (one by one) consolidates.
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref || '-small', 'S', 10000, '{GBP}')
  RETURNING club_id INTO v_other;
  PERFORM mr_pool_topup(v_ref || '-small', 32);  -- 2 points a stripe
  PERFORM mr_write('member', v_other, v_ref || '-small', 'm-eve', 'fp', 'req',
                   jsonb_build_object('partnerRef', v_ref || '-small', 'externalMemberId', 'eve', 'firstName', 'E',
                                      'lastName', 'V', 'email', 'e@example.com'));
  v_err := pg_temp.batch_error(jsonb_build_array(
    pg_temp.el(v_other, v_ref || '-small', 'k-dry', pg_temp.settle(v_ref || '-small', 'eve', 'tx-dry', 5))));
  IF v_err <> '23514' THEN RAISE EXCEPTION 'a dry stripe: %', v_err; END IF;
  IF (mr_write('settle', v_other, v_ref || '-small', 'k-dry', 'fp', 'req',
               pg_temp.settle(v_ref || '-small', 'eve', 'tx-dry', 5))->'data'->'partner'->>'availablePointsPool') <> '27'
  THEN
    RAISE EXCEPTION 'one by one, the dry stripe''s award should consolidate';
  END IF;
  IF pg_temp.books(v_club) <> v_before THEN RAISE EXCEPTION 'a failed batch left something behind'; END IF;

  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
