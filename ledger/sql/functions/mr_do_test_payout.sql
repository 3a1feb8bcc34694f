-- POST /api/v1/test-helpers/redemptions/{id}/payout (sandbox): the move an
-- operator's report makes, with its conflicts.
CREATE OR REPLACE FUNCTION mr_do_test_payout(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_payout payouts%ROWTYPE;
BEGIN
  SELECT p.* INTO v_payout FROM redemptions r JOIN payouts p USING (redemption_id)
  WHERE r.club_id = p_club_id AND r.redemption_id = p_cmd->>'redemptionId' FOR UPDATE OF p;
  IF v_payout.payout_id IS NULL THEN RETURN mr_fail('redemption_not_found', p_request_id); END IF;
  IF v_payout.status IN ('succeeded', 'failed') AND v_payout.status <> p_cmd->>'outcome' THEN
    RETURN mr_fail('payout_state_conflict', p_request_id,
                   'The payout already ' || v_payout.status || '; it cannot become ' || (p_cmd->>'outcome') || '.');
  END IF;
  RETURN mr_ok('ok', p_request_id,
               mr_payout_move(v_payout.payout_id, p_cmd->>'outcome', p_cmd->>'failureReason'));
END $function$;
