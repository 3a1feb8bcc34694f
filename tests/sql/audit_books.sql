-- mrctl audit's queries (mr_audit, and mr_audit_club for --club): silent on
-- a club whose books went through awards, reversals, adjustments, a close
-- and redemptions paid and failed; then each kind of drift, made by hand, is
-- named, by both alike. Every break is undone by
-- a savepoint, and the whole script is rolled back at the end.

-- What the audit says about the club: the whole books' audit (mr_audit)
-- and the club's own (mr_audit_club, mrctl audit --club) must say the same.
CREATE FUNCTION pg_temp.audit(p_ref text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_books text[];
  v_club text[];
BEGIN
  SELECT coalesce(array_agg(a ORDER BY a), '{}') INTO v_books FROM mr_audit() a WHERE a LIKE '%club ' || p_ref || '%';
  SELECT coalesce(array_agg(a ORDER BY a), '{}') INTO v_club
  FROM clubs c, mr_audit_club(c.club_id) a WHERE c.partner_ref = p_ref;
  IF v_books IS DISTINCT FROM v_club THEN
    RAISE EXCEPTION 'mr_audit says %, mr_audit_club says %', v_books, v_club;
  END IF;
  RETURN v_club;
END $$;

-- Runs p_break, returns what the audit says about the club, undoes the break.
CREATE FUNCTION pg_temp.audit_after(p_ref text, p_break text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_found text[];
BEGIN
  BEGIN
    EXECUTE p_break;
    v_found := pg_temp.audit(p_ref);
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'undo';
  EXCEPTION WHEN raise_exception THEN
    IF SQLERRM <> 'undo' THEN RAISE; END IF;
  END;
  RETURN v_found;
END $$;

CREATE FUNCTION pg_temp.expect_named(p_found text[], p_pattern text, p_what text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF cardinality(p_found) = 0 OR NOT EXISTS (SELECT 1 FROM unnest(p_found) a WHERE a LIKE p_pattern) THEN
    RAISE EXCEPTION '%: audit did not name it (%), found %', p_what, p_pattern, p_found;
  END IF;
END $$;

DO $$
DECLARE
  v_ref text := 'sql-audit-' || txid_current();
  v_club bigint;
  v_ann bigint;
  r jsonb;
  v_paid text;
  v_failed text;
  v_break text;
  v_pattern text;
  v_what text;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies, redemption_rate_minor, payout_currency)
  VALUES (v_ref, 'A', 10000, '{GBP}', 2, 'GBP') RETURNING club_id INTO v_club;
  UPDATE clubs SET cash_capacity_minor = 1000000 WHERE club_id = v_club;
  PERFORM mr_pool_topup(v_ref, 5000);
  FOREACH r IN ARRAY ARRAY[jsonb_build_object('externalMemberId', 'ann'), jsonb_build_object('externalMemberId', 'bob')] LOOP
    r := mr_write('member', v_club, v_ref, 'k-' || (r->>'externalMemberId'), 'f', 'q', r || jsonb_build_object(
      'partnerRef', v_ref, 'firstName', 'A', 'lastName', 'B', 'email', 'a@b.c', 'wallet', jsonb_build_object(
        'status', 'active', 'bankAccount', jsonb_build_object('accountNumber', '12345678', 'sortCode', '123456',
                                                              'name', 'A B'))));
    ASSERT r->>'outcome' = 'created' AND (r->'data'->>'payoutReady')::boolean, r::text;
  END LOOP;
  SELECT member_id INTO v_ann FROM members WHERE club_id = v_club AND external_id = 'ann';
  FOR i IN 1..3 LOOP
    r := mr_write('settle', v_club, v_ref, 'k-s' || i, 'f', 'q', jsonb_build_object('partnerRef', v_ref,
      'eventId', 'e' || i, 'occurredAt', '2026-11-20T10:00:00Z', 'externalMemberId', CASE WHEN i = 3 THEN 'bob' ELSE 'ann' END,
      'externalTransactionId', 'tx-' || i, 'merchantId', 'm', 'merchantName', 'M', 'amountMinor', 400,
      'currency', 'GBP', 'settledAt', '2026-11-20T10:00:00Z'));
    ASSERT r->>'outcome' = 'ok', r::text;
  END LOOP;
  r := mr_write('reverse', v_club, v_ref, 'k-r', 'f', 'q', jsonb_build_object('partnerRef', v_ref, 'eventId', 'r',
    'occurredAt', '2026-11-20T10:00:00Z', 'externalMemberId', 'ann', 'externalTransactionId', 'tx-2',
    'amountMinor', 150, 'currency', 'GBP'));
  ASSERT r->>'outcome' = 'ok', r::text;
  PERFORM mr_adjust(v_ref, 'ann', 25, 'goodwill');
  PERFORM mr_adjust(v_ref, 'ann', -5, 'correction');
  -- Positive adjustments come out of the pool, so they are refused beyond it.
  BEGIN
    PERFORM mr_adjust(v_ref, 'ann', 5000, 'too much');
    RAISE EXCEPTION 'an adjustment above the pool was allowed';
  EXCEPTION WHEN raise_exception THEN
    ASSERT SQLERRM LIKE 'the points pool of % cannot cover 5000 points', SQLERRM;
  END;
  -- Two redemptions: one paid (burn), one failed (release); one still pending.
  FOR i IN 1..3 LOOP
    r := mr_write('redeem', v_club, v_ref, 'k-d' || i, 'f', 'q', jsonb_build_object('partnerRef', v_ref,
      'externalMemberId', 'ann', 'requestId', 'rq-' || i, 'points', 100, 'currency', 'GBP'));
    ASSERT r->>'outcome' = 'accepted', r::text;
    IF i = 1 THEN v_paid := r->'data'->'payout'->>'payoutId'; END IF;
    IF i = 2 THEN v_failed := r->'data'->'payout'->>'payoutId'; END IF;
  END LOOP;
  PERFORM mr_payout_move(v_paid, 'succeeded');
  PERFORM mr_payout_move(v_failed, 'failed', 'test');
  r := mr_write('close', v_club, v_ref, 'k-c', 'f', 'q', jsonb_build_object('partnerRef', v_ref, 'externalMemberId', 'bob'));
  ASSERT r->>'outcome' = 'ok' AND (r->'data'->>'pointsForfeited')::bigint = 400, r::text;
  ASSERT (SELECT burned_points FROM clubs WHERE club_id = v_club) = 100, 'one redemption burned';
  ASSERT (SELECT reserved FROM members WHERE member_id = v_ann) = 100, 'one redemption pending';

  -- Consistent books: nothing to say about this club.
  ASSERT pg_temp.audit(v_ref) = '{}', pg_temp.audit(v_ref)::text;

  -- Every kind of drift is named: each break (%1$s stands for ann's
  -- member_id, %2$s for the club's id), what the audit must say, and what
  -- the break is.
  FOR v_break, v_pattern, v_what IN SELECT * FROM (VALUES
    ('UPDATE members SET available = available + 1 WHERE member_id = %1$s',
     'member ann of club % balances %', 'available drift'),
    ('UPDATE members SET lifetime_earned = lifetime_earned - 1 WHERE member_id = %1$s',
     'member ann of club %: lifetime earned %', 'lifetime earned drift'),
    ('UPDATE members SET lifetime_redeemed = lifetime_redeemed + 1 WHERE member_id = %1$s',
     'member ann of club %: lifetime redeemed %', 'lifetime redeemed drift'),
    ('UPDATE redemptions SET status = ''failed'' WHERE club_id = %2$s AND request_id = ''rq-3''',
     'member ann of club %: reserved 100, pending redemptions hold 0', 'reserved vs redemptions'),
    ('UPDATE club_pool_stripes SET points = points + 1 WHERE club_id = %2$s AND stripe = 3',
     'club %: pool % <> funded %', 'pool drift'),
    ('UPDATE clubs SET funded_points = funded_points - 1 WHERE club_id = %2$s',
     'club %: pool % <> funded %', 'funded drift'),
    ('UPDATE clubs SET burned_points = burned_points + 1 WHERE club_id = %2$s',
     'club %: burned 101, members redeemed 100', 'burned drift'),
    ('DELETE FROM club_pool_stripes WHERE club_id = %2$s AND stripe = 15',
     'club %: 15 pool stripes, not 16', 'missing stripe'),
    ('UPDATE transactions SET reversed_amount = reversed_amount + 1 WHERE club_id = %2$s AND external_id = ''tx-2''',
     'transaction tx-2 of club %', 'reversed amount vs reversal rows'),
    ('UPDATE transactions SET points = points + 1, reversed_points = reversed_points WHERE club_id = %2$s AND external_id = ''tx-1''',
     'transaction tx-1 of club %: points 401%', 'transaction points vs entry')) AS b LOOP
    PERFORM pg_temp.expect_named(pg_temp.audit_after(v_ref, format(v_break, v_ann, v_club)), v_pattern, v_what);
  END LOOP;
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
