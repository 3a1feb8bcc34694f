-- GET /api/v1/redemptions/{id}: another club's is not found, never shown.
CREATE OR REPLACE FUNCTION mr_redemption(p_club_id bigint, p_redemption text, p_request_id text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce(
    (SELECT mr_ok('ok', p_request_id, mr_redemption_json(redemption_id)) FROM redemptions
     WHERE redemption_id = p_redemption AND club_id = p_club_id),
    mr_fail('redemption_not_found', p_request_id))
$function$;
