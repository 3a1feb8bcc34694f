CREATE OR REPLACE FUNCTION mr_pool_topup(p_ref text, p_points bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_club bigint;
BEGIN
  PERFORM mr_refuse_moving_ref(p_ref);
  IF p_points <= 0 THEN RAISE EXCEPTION 'points must be positive'; END IF;
  UPDATE clubs SET funded_points = funded_points + p_points, updated_at = now()
  WHERE partner_ref = p_ref RETURNING club_id INTO v_club;
  IF v_club IS NULL THEN RAISE EXCEPTION 'no club %', p_ref; END IF;
  PERFORM 1 FROM club_pool_stripes WHERE club_id = v_club ORDER BY stripe FOR UPDATE;
  UPDATE club_pool_stripes SET points = points + p_points / 16 + CASE WHEN stripe < p_points % 16 THEN 1 ELSE 0 END
  WHERE club_id = v_club;
  RETURN jsonb_build_object('partnerRef', p_ref, 'availablePointsPool', mr_pool_total(v_club));
END $function$;
