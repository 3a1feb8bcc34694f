-- A payout result (ops listener, mrctl, simulator). Each move happens once:
-- the same result again is a no-op that succeeds, a contradicting one raises
-- payout_state_conflict. Lock order: payout, then member, then club.
CREATE OR REPLACE FUNCTION mr_payout_move_decide(p_payout text, p_to text, p_reason text DEFAULT NULL::text)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_payout payouts%ROWTYPE;
  v_red redemptions%ROWTYPE;
BEGIN
  IF p_to NOT IN ('submitted', 'succeeded', 'failed') THEN
    RAISE EXCEPTION 'unknown payout status %', p_to;
  END IF;
  SELECT * INTO v_payout FROM payouts WHERE payout_id = p_payout FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'no payout %', p_payout USING ERRCODE = 'P0002'; END IF;
  IF v_payout.status = p_to THEN RETURN mr_redemption_json(v_payout.redemption_id); END IF;
  IF v_payout.status IN ('succeeded', 'failed') OR (p_to = 'submitted' AND v_payout.status <> 'created') THEN
    RAISE EXCEPTION 'payout_state_conflict: payout % is %, cannot become %', p_payout, v_payout.status, p_to
      USING ERRCODE = 'P0409';
  END IF;
  SELECT * INTO v_red FROM redemptions WHERE redemption_id = v_payout.redemption_id;
  PERFORM 1 FROM members WHERE member_id = v_red.member_id FOR UPDATE;
  UPDATE payouts SET status = p_to, failure_reason = CASE WHEN p_to = 'failed' THEN coalesce(p_reason, 'failed') END,
                     updated_at = clock_timestamp()
  WHERE payout_id = p_payout;
  IF p_to = 'succeeded' THEN
    PERFORM mr_add_entry(v_red.member_id, v_red.club_id, 'redeem_burn', 'Redemption paid out', 0, -v_red.points,
                         v_red.cash_value_minor, v_red.currency, NULL, NULL, NULL, v_red.redemption_id);
    UPDATE members SET lifetime_redeemed = lifetime_redeemed + v_red.points WHERE member_id = v_red.member_id;
    UPDATE clubs SET burned_points = burned_points + v_red.points WHERE club_id = v_red.club_id;
    UPDATE redemptions SET status = 'completed', updated_at = clock_timestamp() WHERE redemption_id = v_red.redemption_id;
  ELSIF p_to = 'failed' THEN
    PERFORM mr_add_entry(v_red.member_id, v_red.club_id, 'redeem_release', 'Payout failed: points returned',
                         v_red.points, -v_red.points, v_red.cash_value_minor, v_red.currency, NULL, NULL, NULL,
                         v_red.redemption_id);
    UPDATE clubs SET cash_capacity_minor = cash_capacity_minor + v_red.cash_value_minor WHERE club_id = v_red.club_id;
    UPDATE redemptions SET status = 'failed', updated_at = clock_timestamp() WHERE redemption_id = v_red.redemption_id;
  END IF;
  RETURN mr_redemption_json(v_red.redemption_id);
END $function$;
