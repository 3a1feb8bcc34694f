-- A POST's signature serves one idempotency key (contract section 2), in
-- the write's own transaction, whichever path the write takes: mr_write
-- alone, a settle batch (mr_write_batch) or a batch of reversals
-- (mr_write_batch_each). Under another key the signature is
-- invalid_signature, nothing applied and no record kept; under its own key
-- it replays; a write without one (NULL) is not checked. Runs in one
-- transaction rolled back at the end.
BEGIN;

\ir include/settle_command.sql

CREATE FUNCTION pg_temp.reverse(p_ref text, p_member text, p_tx text, p_amount bigint) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object('partnerRef', p_ref, 'eventId', 'rev-' || p_tx, 'occurredAt', '2026-11-22T10:00:00Z',
    'externalMemberId', p_member, 'externalTransactionId', p_tx, 'amountMinor', p_amount, 'currency', 'GBP')
$$;

-- One batch element as the module writes it, the signature as bytea's text.
CREATE FUNCTION pg_temp.el(p_op text, p_club bigint, p_ref text, p_key text, p_cmd jsonb, p_sig bytea)
RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_array(p_op, p_club::text, p_ref, p_key, 'fp-' || md5(p_cmd::text), 'req-' || p_key, p_cmd,
                           p_sig::text)
$$;

CREATE FUNCTION pg_temp.write(p_el jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT mr_write(p_el->>0, (p_el->>1)::bigint, p_el->>2, p_el->>3, p_el->>4, p_el->>5, p_el->6, (p_el->>7)::bytea)
$$;

CREATE FUNCTION pg_temp.books(p_club bigint) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object(
    'members', (SELECT jsonb_agg(jsonb_build_array(external_id, available, lifetime_earned) ORDER BY external_id)
                FROM members WHERE club_id = p_club),
    'entries', (SELECT count(*) FROM ledger_entries WHERE club_id = p_club),
    'transactions', (SELECT jsonb_agg(jsonb_build_array(external_id, reversed_amount) ORDER BY external_id)
                     FROM transactions WHERE club_id = p_club),
    'records', (SELECT count(*) FROM idempotency_records WHERE club_id = p_club),
    'events', (SELECT count(*) FROM events WHERE club_id = p_club),
    'pool', mr_pool_total(p_club))
$$;

DO $$
DECLARE
  v_ref text := 'sql-sig-' || txid_current();
  v_club bigint;
  v_sig bytea := sha256(('settle ' || txid_current())::bytea);
  v_rsig bytea := sha256(('reverse ' || txid_current())::bytea);
  v_bsig bytea := sha256(('batch ' || txid_current())::bytea);
  v_first jsonb;
  v_r jsonb;
  v_books jsonb;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref, 'S', 100, '{GBP}')
  RETURNING club_id INTO v_club;
  PERFORM mr_pool_topup(v_ref, 1000000);
  INSERT INTO members (club_id, external_id, first_name, last_name, email)
  SELECT v_club, 'm' || i, 'A', 'B', 'a@b.c' FROM generate_series(0, 3) i;

  -- mr_write alone: a settle signed once, under key A, then B, then A.
  v_first := pg_temp.write(pg_temp.el('settle', v_club, v_ref, 'a', pg_temp.settle(v_ref, 'm0', 't0', 10000), v_sig));
  ASSERT v_first->>'outcome' = 'ok', v_first::text;
  ASSERT (SELECT signature FROM idempotency_records WHERE club_id = v_club AND idem_key = 'a') = v_sig,
    'the record keeps the signature';
  v_books := pg_temp.books(v_club);
  v_r := pg_temp.write(pg_temp.el('settle', v_club, v_ref, 'b', pg_temp.settle(v_ref, 'm0', 't0', 10000), v_sig));
  ASSERT v_r->>'outcome' = 'invalid_signature', v_r::text;
  ASSERT v_r->>'message' LIKE '%another X-MR-Idempotency-Key%', v_r::text;
  ASSERT pg_temp.books(v_club) = v_books, 'nothing applied, no record kept under b';
  v_r := pg_temp.write(pg_temp.el('settle', v_club, v_ref, 'a', pg_temp.settle(v_ref, 'm0', 't0', 10000), v_sig));
  ASSERT v_r = v_first || '{"replayed": true}', v_r::text;
  -- Without a signature nothing is checked: a business duplicate as before.
  v_r := pg_temp.write(pg_temp.el('settle', v_club, v_ref, 'c', pg_temp.settle(v_ref, 'm0', 't0', 10000), NULL));
  ASSERT v_r->>'outcome' = 'duplicate_transaction', v_r::text;

  -- A partial reversal through mr_write_batch_each, captured and sent
  -- again under a new key in a later batch, and beside a fresh one.
  v_r := (SELECT jsonb_agg(r) FROM mr_write_batch_each(jsonb_build_array(
            pg_temp.el('reverse', v_club, v_ref, 'r-a', pg_temp.reverse(v_ref, 'm0', 't0', 2500), v_rsig))) r);
  ASSERT v_r->0->>'outcome' = 'ok', v_r::text;
  v_books := pg_temp.books(v_club);
  v_r := (SELECT jsonb_agg(r) FROM mr_write_batch_each(jsonb_build_array(
            pg_temp.el('reverse', v_club, v_ref, 'r-b', pg_temp.reverse(v_ref, 'm0', 't0', 2500), v_rsig))) r);
  ASSERT v_r->0->>'outcome' = 'invalid_signature', v_r::text;
  ASSERT pg_temp.books(v_club) = v_books, 'the reversal ran once';
  ASSERT (SELECT reversed_amount FROM transactions WHERE club_id = v_club AND external_id = 't0') = 2500;

  -- A settle batch: one element whose signature served another key, one
  -- fresh, one replay of its own key.
  v_r := pg_temp.write(pg_temp.el('settle', v_club, v_ref, 'b-a', pg_temp.settle(v_ref, 'm1', 't1', 5000), v_bsig));
  ASSERT v_r->>'outcome' = 'ok', v_r::text;
  v_books := pg_temp.books(v_club);
  v_r := (SELECT jsonb_agg(r ORDER BY ord) FROM mr_write_batch(jsonb_build_array(
            pg_temp.el('settle', v_club, v_ref, 'b-b', pg_temp.settle(v_ref, 'm1', 't1', 5000), v_bsig),
            pg_temp.el('settle', v_club, v_ref, 'b-c', pg_temp.settle(v_ref, 'm2', 't2', 3000),
                       sha256('fresh'::bytea)),
            pg_temp.el('settle', v_club, v_ref, 'b-a', pg_temp.settle(v_ref, 'm1', 't1', 5000), v_bsig)))
            WITH ORDINALITY b(r, ord));
  ASSERT v_r->0->>'outcome' = 'invalid_signature', v_r::text;
  ASSERT v_r->0->>'message' LIKE '%another X-MR-Idempotency-Key%', v_r::text;
  ASSERT v_r->1->>'outcome' = 'ok', v_r::text;
  ASSERT v_r->2 ? 'replayed', v_r::text;
  ASSERT NOT EXISTS (SELECT 1 FROM idempotency_records WHERE club_id = v_club AND idem_key = 'b-b'),
    'no record for the refused key';
  ASSERT (SELECT available FROM members WHERE club_id = v_club AND external_id = 'm1') = 50, 'm1 awarded once';
  ASSERT (SELECT available FROM members WHERE club_id = v_club AND external_id = 'm2') = 30, 'm2 awarded';
  ASSERT (SELECT count(*) FROM events WHERE club_id = v_club) = (v_books->>'events')::int + 1, 'one event, for m2';

  -- The index holds the rule should a writer skip the check.
  BEGIN
    INSERT INTO idempotency_records (club_id, idem_key, fingerprint, result, signature)
    VALUES (v_club, 'forged', 'fp', '{}', v_sig);
    RAISE EXCEPTION 'a second record with one signature was kept';
  EXCEPTION WHEN unique_violation THEN NULL;
  END;
END $$;
ROLLBACK;
