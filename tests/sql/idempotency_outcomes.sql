-- Which outcomes mr_write keeps (contract section 3): every 2xx, 404, 409
-- and 422 it decides is replayed byte for byte under the same key and
-- fingerprint, even after the state that caused it has changed;
-- invalid_request and the conflict answer are not kept. Rolled back at the end.

\ir include/settle_command.sql

DO $$
DECLARE
  v_ref text := 'sql-idem-out-' || txid_current();
  v_club bigint;
  v_other bigint;
  m jsonb;
  r1 jsonb;
  r2 jsonb;
  v_entries bigint;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref, 'I', 10000, '{GBP}')
  RETURNING club_id INTO v_club;
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref || '-b', 'J', 10000, '{GBP}')
  RETURNING club_id INTO v_other;
  PERFORM mr_pool_topup(v_ref, 10);

  -- 404 kept: cardholder_not_found replays even once the member exists.
  r1 := mr_write('settle', v_club, v_ref, 'k-404', 'f-404', 'req-a', pg_temp.settle(v_ref, 'ann', 'tx-1', 5));
  ASSERT r1->>'outcome' = 'cardholder_not_found' AND r1->>'requestId' = 'req-a', r1::text;
  m := jsonb_build_object('partnerRef', v_ref, 'externalMemberId', 'ann', 'firstName', 'A', 'lastName', 'B',
                          'email', 'a@b.c');
  ASSERT mr_write('member', v_club, v_ref, 'k-m', 'f-m', 'req-m', m)->>'outcome' = 'created';
  r2 := mr_write('settle', v_club, v_ref, 'k-404', 'f-404', 'req-b', pg_temp.settle(v_ref, 'ann', 'tx-1', 5));
  ASSERT r2 = r1 || '{"replayed": true}', format('404 replay: %s', r2);
  ASSERT NOT EXISTS (SELECT 1 FROM transactions WHERE club_id = v_club), 'a replay does no work';

  -- 422 kept: the pool refusal replays after a top-up.
  r1 := mr_write('settle', v_club, v_ref, 'k-422', 'f-422', 'req-c', pg_temp.settle(v_ref, 'ann', 'tx-2', 11));
  ASSERT r1->>'outcome' = 'insufficient_partner_points_pool', r1::text;
  PERFORM mr_pool_topup(v_ref, 100);
  r2 := mr_write('settle', v_club, v_ref, 'k-422', 'f-422', 'req-d', pg_temp.settle(v_ref, 'ann', 'tx-2', 11));
  ASSERT r2 = r1 || '{"replayed": true}', format('422 replay: %s', r2);

  -- 200 kept: the same settle replays its first answer (requestId of the
  -- first request, the balances then), not a duplicate_transaction.
  r1 := mr_write('settle', v_club, v_ref, 'k-200', 'f-200', 'req-e', pg_temp.settle(v_ref, 'ann', 'tx-3', 7));
  ASSERT r1->>'outcome' = 'ok' AND (r1->'data'->>'pointsAwarded')::bigint = 7, r1::text;
  SELECT count(*) INTO v_entries FROM ledger_entries WHERE club_id = v_club;
  r2 := mr_write('settle', v_club, v_ref, 'k-200', 'f-200', 'req-f', pg_temp.settle(v_ref, 'ann', 'tx-3', 7));
  ASSERT r2 = r1 || '{"replayed": true}' AND r2->>'requestId' = 'req-e', format('200 replay: %s', r2);
  ASSERT (SELECT count(*) FROM ledger_entries WHERE club_id = v_club) = v_entries, 'nothing awarded twice';
  -- The same business id under a new key is a duplicate (409, kept too).
  r1 := mr_write('settle', v_club, v_ref, 'k-409', 'f-409', 'req-g', pg_temp.settle(v_ref, 'ann', 'tx-3', 7));
  ASSERT r1->>'outcome' = 'duplicate_transaction', r1::text;
  ASSERT mr_write('settle', v_club, v_ref, 'k-409', 'f-409', 'req-h', pg_temp.settle(v_ref, 'ann', 'tx-3', 7))
         = r1 || '{"replayed": true}', '409 replay';

  -- Same key, other fingerprint: conflict with the current request id, not kept.
  r1 := mr_write('settle', v_club, v_ref, 'k-200', 'f-other', 'req-i', pg_temp.settle(v_ref, 'ann', 'tx-4', 7));
  ASSERT r1 = jsonb_build_object('outcome', 'duplicate_idempotency_conflict', 'requestId', 'req-i'), r1::text;
  ASSERT (SELECT fingerprint FROM idempotency_records WHERE club_id = v_club AND idem_key = 'k-200') = 'f-200',
    'the conflict left the first record alone';
  ASSERT NOT EXISTS (SELECT 1 FROM transactions WHERE club_id = v_club AND external_id = 'tx-4'), 'no work on conflict';

  -- invalid_request (reversal in another currency) is not kept: the fixed
  -- request under the same key is processed.
  r1 := mr_write('reverse', v_club, v_ref, 'k-400', 'f-400-a', 'req-j', jsonb_build_object('partnerRef', v_ref,
          'eventId', 'r1', 'occurredAt', '2026-11-22T10:00:00Z', 'externalMemberId', 'ann',
          'externalTransactionId', 'tx-3', 'currency', 'EUR'));
  ASSERT r1->>'outcome' = 'invalid_request', r1::text;
  ASSERT NOT EXISTS (SELECT 1 FROM idempotency_records WHERE club_id = v_club AND idem_key = 'k-400'), '400 not kept';
  r2 := mr_write('reverse', v_club, v_ref, 'k-400', 'f-400-b', 'req-k', jsonb_build_object('partnerRef', v_ref,
          'eventId', 'r1', 'occurredAt', '2026-11-22T10:00:00Z', 'externalMemberId', 'ann',
          'externalTransactionId', 'tx-3', 'currency', 'GBP'));
  ASSERT r2->>'outcome' = 'ok' AND (r2->'data'->>'pointsReversed')::bigint = 7, r2::text;

  -- The scope is (club, key): another club's same key and fingerprint is its own request.
  r1 := mr_write('settle', v_other, v_ref || '-b', 'k-200', 'f-200', 'req-l',
                 pg_temp.settle(v_ref || '-b', 'ann', 'tx-3', 7));
  ASSERT r1->>'outcome' = 'cardholder_not_found' AND NOT r1 ? 'replayed', r1::text;

  -- Records are dated for pruning (30 days, mrctl idempotency prune).
  ASSERT (SELECT bool_and(created_at = now()) FROM idempotency_records WHERE club_id = v_club), 'dated now';
  ASSERT (SELECT count(*) FROM idempotency_records WHERE club_id = v_club) = 6,
    (SELECT string_agg(idem_key, ',') FROM idempotency_records WHERE club_id = v_club);
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
