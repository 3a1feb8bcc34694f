CREATE OR REPLACE FUNCTION mr_adjust(p_ref text, p_member text, p_points bigint, p_reason text)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_result jsonb;
  v_member members%ROWTYPE;
BEGIN
  PERFORM mr_refuse_moving_ref(p_ref);
  v_result := mr_adjust_decide(p_ref, p_member, p_points, p_reason);
  SELECT m.* INTO v_member FROM members m JOIN clubs c USING (club_id)
  WHERE c.partner_ref = p_ref AND m.external_id = p_member;
  PERFORM mr_emit(v_member.club_id, v_member.member_id, 'points.adjusted', jsonb_build_object(
    'pointsDelta', p_points, 'reason', p_reason, 'balances', v_result->'balances'));
  RETURN v_result;
END $function$;
