CREATE OR REPLACE FUNCTION mr_payout_move(p_payout text, p_to text, p_reason text DEFAULT NULL::text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
  PERFORM mr_refuse_moving(club_id) FROM payouts WHERE payout_id = p_payout;
  RETURN mr_payout_move_unpaused(p_payout, p_to, p_reason);
END $function$;
