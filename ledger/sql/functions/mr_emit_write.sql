-- The event of a partner write that succeeded (not replayed): its type and
-- data from the operation's answer.
CREATE OR REPLACE FUNCTION mr_emit_write(p_op text, p_club_id bigint, p_cmd jsonb, p_result jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_member bigint;
  v_data jsonb := p_result->'data';
BEGIN
  IF p_op NOT IN ('member', 'settle', 'reverse', 'redeem', 'close') THEN RETURN; END IF;
  SELECT member_id INTO v_member FROM members
  WHERE club_id = p_club_id AND external_id = p_cmd->>'externalMemberId';
  IF p_op = 'member' THEN
    PERFORM mr_emit(p_club_id, v_member, 'member.' || (p_result->>'outcome'), jsonb_build_object(
      'status', (SELECT status FROM members WHERE member_id = v_member), 'payoutReady', v_data->'payoutReady'));
  ELSIF p_op = 'settle' THEN
    PERFORM mr_emit(p_club_id, v_member, 'transaction.settled', jsonb_build_object(
      'eventId', v_data->'eventId', 'externalTransactionId', v_data->'externalTransactionId',
      'pointsAwarded', v_data->'pointsAwarded', 'balances', v_data->'balances',
      'ledgerGroupId', v_data->'ledgerGroupId'));
  ELSIF p_op = 'reverse' THEN
    PERFORM mr_emit(p_club_id, v_member, 'transaction.reversed', jsonb_build_object(
      'eventId', v_data->'eventId', 'externalTransactionId', v_data->'externalTransactionId',
      'pointsReversed', v_data->'pointsReversed', 'balances', v_data->'balances',
      'ledgerGroupId', v_data->'ledgerGroupId'));
  ELSIF p_op = 'redeem' THEN
    PERFORM mr_emit(p_club_id, v_member, 'redemption.created',
                    mr_redemption_json(v_data->>'redemptionId')
                      || jsonb_build_object('balances', mr_balances(v_member)));
  ELSE  -- close
    PERFORM mr_emit(p_club_id, v_member, 'member.closed', jsonb_build_object(
      'closedAt', v_data->'closedAt', 'pointsForfeited', v_data->'pointsForfeited',
      'balances', mr_balances(v_member)));
  END IF;
END $function$;
