-- GET /api/v1/members/{id}/balance
CREATE OR REPLACE FUNCTION mr_balance(p_club_id bigint, p_member text, p_request_id text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce((
    SELECT mr_ok('ok', p_request_id, jsonb_build_object(
      'externalMemberId', m.external_id, 'memberStatus', m.status,
      'pointsBalance', m.available, 'reservedPointsBalance', m.reserved,
      'lifetimePointsEarned', m.lifetime_earned, 'lifetimePointsRedeemed', m.lifetime_redeemed,
      'currency', c.payout_currency,
      'cashValueMinor', greatest(m.available, 0)::numeric * coalesce(c.redemption_rate_minor, 0)))
    FROM members m JOIN clubs c USING (club_id)
    WHERE m.club_id = p_club_id AND m.external_id = p_member),
    mr_fail('cardholder_not_found', p_request_id))
$function$;
