-- Points out of the pool, drawn from the connection's stripe
-- (mr_pool_stripe; p_member_id is kept for the callers and does not pick
-- the stripe).
CREATE OR REPLACE FUNCTION mr_pool_take(p_club_id bigint, p_member_id bigint, p_points bigint)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_total bigint;
  v_rest bigint;
BEGIN
  IF p_points = 0 THEN RETURN true; END IF;
  BEGIN
    UPDATE club_pool_stripes SET points = points - p_points
    WHERE club_id = p_club_id AND stripe = mr_pool_stripe() AND points >= p_points;
    IF FOUND THEN RETURN true; END IF;
    RAISE EXCEPTION USING ERRCODE = 'MRP01';  -- undo the subtransaction: drop any lock it kept
  EXCEPTION WHEN SQLSTATE 'MRP01' THEN
    NULL;
  END;
  -- The connection's stripe ran dry: holding no stripe now, lock every
  -- stripe in order, then spread what remains after the award evenly again.
  PERFORM 1 FROM club_pool_stripes WHERE club_id = p_club_id ORDER BY stripe FOR UPDATE;
  v_total := mr_pool_total(p_club_id);
  IF v_total < p_points THEN RETURN false; END IF;
  v_rest := v_total - p_points;
  UPDATE club_pool_stripes SET points = v_rest / 16 + CASE WHEN stripe < v_rest % 16 THEN 1 ELSE 0 END
  WHERE club_id = p_club_id;
  RETURN true;
END $function$;
