-- POST /api/v1/members/{id}/close
CREATE OR REPLACE FUNCTION mr_do_close(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_member members%ROWTYPE;
  v_club clubs%ROWTYPE;
  v_forfeit bigint;
BEGIN
  SELECT * INTO v_member FROM members
  WHERE club_id = p_club_id AND external_id = p_cmd->>'externalMemberId' FOR UPDATE;
  IF v_member.member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  IF v_member.status = 'closed' THEN RETURN mr_fail('member_closed', p_request_id); END IF;
  IF EXISTS (SELECT 1 FROM redemptions WHERE member_id = v_member.member_id AND status = 'payout_pending') THEN
    RETURN mr_fail('member_has_pending_redemptions', p_request_id);
  END IF;
  SELECT * INTO v_club FROM clubs WHERE club_id = p_club_id;
  -- The available balance goes back to the pool. A negative balance (points
  -- reversed after they were redeemed) is left as it is: zeroing it would
  -- hand out points.
  v_forfeit := greatest(v_member.available, 0);
  IF v_forfeit > 0 THEN
    PERFORM mr_add_entry(v_member.member_id, p_club_id, 'close_forfeit',
                         coalesce('Closed: ' || (p_cmd->>'reason'), 'Closed'), -v_forfeit, 0, NULL,
                         v_club.payout_currency, NULL, NULL, NULL, 'close');
    PERFORM mr_pool_give(p_club_id, v_member.member_id, v_forfeit);
  END IF;
  UPDATE members SET status = 'closed', closed_at = clock_timestamp(), updated_at = now()
  WHERE member_id = v_member.member_id RETURNING * INTO v_member;
  RETURN mr_ok('ok', p_request_id, jsonb_build_object(
    'externalMemberId', v_member.external_id, 'status', 'closed', 'closedAt', mr_ts_text(v_member.closed_at),
    'pointsForfeited', v_forfeit));
END $function$;
