-- mrctl member adjust: a manual_adjustment moves points between the pool
-- and the member, so the books still balance.
CREATE OR REPLACE FUNCTION mr_adjust_decide(p_ref text, p_member text, p_points bigint, p_reason text)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_club clubs%ROWTYPE;
  v_member members%ROWTYPE;
BEGIN
  SELECT * INTO v_club FROM clubs WHERE partner_ref = p_ref;
  IF v_club.club_id IS NULL THEN RAISE EXCEPTION 'no club %', p_ref; END IF;
  SELECT * INTO v_member FROM members WHERE club_id = v_club.club_id AND external_id = p_member FOR UPDATE;
  IF v_member.member_id IS NULL THEN RAISE EXCEPTION 'no member % in club %', p_member, p_ref; END IF;
  IF v_member.status = 'closed' THEN RAISE EXCEPTION 'member % is closed', p_member; END IF;
  IF p_points = 0 OR coalesce(p_reason, '') = '' THEN RAISE EXCEPTION 'points must be non-zero and a reason given'; END IF;
  IF p_points > 0 THEN
    IF NOT mr_pool_take(v_club.club_id, v_member.member_id, p_points) THEN
      RAISE EXCEPTION 'the points pool of % cannot cover % points', p_ref, p_points;
    END IF;
  ELSE
    PERFORM mr_pool_give(v_club.club_id, v_member.member_id, -p_points);
  END IF;
  PERFORM mr_add_entry(v_member.member_id, v_club.club_id, 'manual_adjustment', p_reason, p_points, 0, NULL,
                       v_club.payout_currency, NULL, NULL, NULL, 'adjustment');
  RETURN jsonb_build_object('externalMemberId', p_member, 'pointsAdjusted', p_points,
                            'balances', mr_balances(v_member.member_id));
END $function$;
