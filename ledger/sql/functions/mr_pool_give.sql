-- Points back into the pool, on the connection's stripe (mr_pool_stripe).
CREATE OR REPLACE FUNCTION mr_pool_give(p_club_id bigint, p_member_id bigint, p_points bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE club_pool_stripes SET points = points + p_points
  WHERE club_id = p_club_id AND stripe = mr_pool_stripe() AND p_points <> 0;
END $function$;
