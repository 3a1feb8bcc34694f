-- mr_write keeps every outcome it decides and replays or refuses by key.
DO $$
DECLARE
  v_club bigint;
  v_ref text := 'sql-idem-' || txid_current();
  r1 jsonb; r2 jsonb; r3 jsonb;
  m jsonb;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref, 'I', 100, '{GBP}')
  RETURNING club_id INTO v_club;
  m := jsonb_build_object('partnerRef', v_ref, 'externalMemberId', 'm', 'firstName', 'A', 'lastName', 'B',
                          'email', 'a@b.c');
  r1 := mr_write('member', v_club, v_ref, 'k1', 'f1', 'req1', m);
  ASSERT r1->>'outcome' = 'created', r1::text;
  r2 := mr_write('member', v_club, v_ref, 'k1', 'f1', 'req2', m);
  ASSERT r2->>'replayed' = 'true' AND r2 - 'replayed' = r1, 'same result, replayed';
  r3 := mr_write('member', v_club, v_ref, 'k1', 'f2', 'req3', m);
  ASSERT r3->>'outcome' = 'duplicate_idempotency_conflict', r3::text;
  -- partner_not_found is kept too.
  r1 := mr_write('member', v_club, 'other-ref', 'k2', 'f', 'req4', m);
  ASSERT r1->>'outcome' = 'partner_not_found', r1::text;
  ASSERT (mr_write('member', v_club, 'other-ref', 'k2', 'f', 'req5', m))->>'replayed' = 'true';
  -- Another club with the same key does not see this one's record.
  ASSERT NOT EXISTS (SELECT 1 FROM idempotency_records WHERE club_id <> v_club AND idem_key = 'k1' AND fingerprint = 'f1'
                     AND result->>'requestId' = 'req1');
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
