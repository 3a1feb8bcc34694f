-- mr_pool_take without deadlocks between consolidations.
--
-- 002's fast path, UPDATE ... WHERE stripe = s AND points >= n, can fail and
-- still leave stripe s locked: under READ COMMITTED, when the row was changed
-- by a transaction that committed after our snapshot, PostgreSQL locks its
-- newest version to recheck the condition and keeps that lock even when the
-- recheck fails. The consolidation then locks stripes 0..15 while already
-- holding s, out of order, and two consolidating awards deadlock (measured:
-- 5-8 of 800 awards racing for a nearly empty pool failed with "deadlock
-- detected", bench/run_pgbench_pool.sh). Running the fast path in a
-- subtransaction and rolling it back when it takes nothing releases that
-- lock, so a consolidation starts holding no stripe and takes all of them in
-- ascending order. Cost: one subtransaction per award (within run-to-run
-- noise in the same benchmark, at most about 5 %).
CREATE OR REPLACE FUNCTION mr_pool_take(p_club_id bigint, p_member_id bigint, p_points bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_total bigint;
  v_rest bigint;
BEGIN
  IF p_points = 0 THEN RETURN true; END IF;
  BEGIN
    UPDATE club_pool_stripes SET points = points - p_points
    WHERE club_id = p_club_id AND stripe = p_member_id % 16 AND points >= p_points;
    IF FOUND THEN RETURN true; END IF;
    RAISE EXCEPTION USING ERRCODE = 'MRP01';  -- undo the subtransaction: drop any lock it kept
  EXCEPTION WHEN SQLSTATE 'MRP01' THEN
    NULL;
  END;
  -- The member's stripe ran dry: holding no stripe now, lock every stripe
  -- in order, then spread what remains after the award evenly again.
  PERFORM 1 FROM club_pool_stripes WHERE club_id = p_club_id ORDER BY stripe FOR UPDATE;
  v_total := mr_pool_total(p_club_id);
  IF v_total < p_points THEN RETURN false; END IF;
  v_rest := v_total - p_points;
  UPDATE club_pool_stripes SET points = v_rest / 16 + CASE WHEN stripe < v_rest % 16 THEN 1 ELSE 0 END
  WHERE club_id = p_club_id;
  RETURN true;
END $$;
