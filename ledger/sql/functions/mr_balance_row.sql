-- GET /api/v1/members/{id}/balance (mr_balance in 002 as columns).
CREATE OR REPLACE FUNCTION mr_balance_row(p_club_id bigint, p_member text)
 RETURNS TABLE(external_id text, member_status text, points_balance bigint, reserved_points_balance bigint, lifetime_points_earned bigint, lifetime_points_redeemed bigint, currency character, cash_value_minor numeric)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT m.external_id, m.status, m.available, m.reserved, m.lifetime_earned, m.lifetime_redeemed,
         c.payout_currency, greatest(m.available, 0)::numeric * coalesce(c.redemption_rate_minor, 0)
  FROM members m JOIN clubs c USING (club_id)
  WHERE m.club_id = p_club_id AND m.external_id = p_member
$function$;
