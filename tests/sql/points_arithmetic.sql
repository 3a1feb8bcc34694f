-- Exact points arithmetic and the pool, against the migrated database.
DO $$
DECLARE
  v_club bigint;
  v_member bigint;
  r jsonb;
  total bigint := 0;
  prev bigint;
  next bigint;
BEGIN
  -- floor(amount * rate / 10000) at the edges of the allowed inputs.
  ASSERT mr_award_points(1, 10000) = 1, '1 minor at 10000 bp';
  ASSERT mr_award_points(1, 9999) = 0, '1 minor at 9999 bp floors to 0';
  ASSERT mr_award_points(1000000000000, 0) = 0, 'rate 0';
  ASSERT mr_award_points(1000000000000, 1) = 100000000, '10^12 at 1 bp';
  ASSERT mr_award_points(1000000000000, 10000) = 1000000000000, '10^12 at 10000 bp';
  ASSERT mr_award_points(1000000000000, 1000000) = 100000000000000, '10^12 at the highest rate: no overflow';
  ASSERT mr_award_points(9999, 1) = 0 AND mr_award_points(10000, 1) = 1, 'rate 1 bp';
  -- Partial reversals on the cumulative amount sum exactly to a full one.
  FOR amt IN 1..3 LOOP
    total := total + mr_reversal_points(333 * amt, 333, mr_award_points(333 * (amt - 1), 333));
  END LOOP;
  ASSERT total = mr_award_points(999, 333), 'three partial reversals = one full reversal';

  -- The pool: exact refusal only when the whole pool cannot cover.
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES ('sql-pool-' || txid_current(), 'P', 10000, '{GBP}')
  RETURNING club_id INTO v_club;
  PERFORM mr_pool_topup((SELECT partner_ref FROM clubs WHERE club_id = v_club), 100);
  ASSERT mr_pool_total(v_club) = 100;
  ASSERT (SELECT max(points) - min(points) FROM club_pool_stripes WHERE club_id = v_club) <= 1, 'spread evenly';
  INSERT INTO members (club_id, external_id, first_name, last_name, email) VALUES (v_club, 'm', 'A', 'B', 'a@b.c')
  RETURNING member_id INTO v_member;
  -- 60 is more than any stripe holds: consolidation takes it from all.
  ASSERT mr_pool_take(v_club, v_member, 60), 'consolidates across stripes';
  ASSERT mr_pool_total(v_club) = 40;
  ASSERT NOT mr_pool_take(v_club, v_member, 41), 'refused only above the total';
  ASSERT mr_pool_total(v_club) = 40, 'a refusal takes nothing';
  ASSERT mr_pool_take(v_club, v_member, 40);
  ASSERT mr_pool_total(v_club) = 0;

  -- Strictly increasing createdAt for one member, even within a millisecond.
  prev := 0;
  FOR i IN 1..50 LOOP
    next := mr_add_entry(v_member, v_club, 'manual_adjustment', 't', 1, 0, NULL, 'GBP', NULL, NULL, NULL, 'x');
    ASSERT next > prev, format('createdAt %s after %s', next, prev);
    prev := next;
  END LOOP;
  ASSERT (SELECT available FROM members WHERE member_id = v_member) = 50, 'the cache moved with the entries';

  -- Entries cannot be changed.
  BEGIN
    UPDATE ledger_entries SET delta_available = 2 WHERE member_id = v_member;
    RAISE EXCEPTION 'update allowed';
  EXCEPTION WHEN raise_exception THEN
    ASSERT SQLERRM = 'ledger entries are append-only', SQLERRM;
  END;

  -- The audit names a member whose cached balance drifted from its entries.
  UPDATE members SET available = available + 5 WHERE member_id = v_member;
  ASSERT EXISTS (SELECT 1 FROM mr_audit() a WHERE a LIKE 'member m of club sql-pool-%'), 'audit finds drift';
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
