CREATE OR REPLACE FUNCTION mr_payout_move(p_payout text, p_to text, p_reason text DEFAULT NULL::text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  v_before text;
  v_result jsonb;
  v_red redemptions%ROWTYPE;
BEGIN
  PERFORM mr_refuse_moving(club_id) FROM payouts WHERE payout_id = p_payout;
  SELECT status INTO v_before FROM payouts WHERE payout_id = p_payout FOR UPDATE;
  v_result := mr_payout_move_decide(p_payout, p_to, p_reason);
  IF v_before IS DISTINCT FROM p_to AND p_to IN ('succeeded', 'failed') THEN
    SELECT r.* INTO v_red FROM redemptions r JOIN payouts p USING (redemption_id) WHERE p.payout_id = p_payout;
    PERFORM mr_emit(v_red.club_id, v_red.member_id,
                    CASE p_to WHEN 'succeeded' THEN 'redemption.completed' ELSE 'redemption.failed' END,
                    v_result || jsonb_build_object('balances', mr_balances(v_red.member_id)));
  END IF;
  RETURN v_result;
END $function$;
