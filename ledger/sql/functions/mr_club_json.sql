-- The operator's view of a club (mrctl club show).
CREATE OR REPLACE FUNCTION mr_club_json(p_club_id bigint)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object(
    'clubId', c.club_id::text, 'partnerRef', c.partner_ref, 'name', c.name,
    'earnRateBasisPoints', c.earn_rate_bp, 'redemptionRateMinorPerPoint', c.redemption_rate_minor,
    'payoutCurrency', c.payout_currency, 'currencies', to_jsonb(c.currencies),
    'minRedemptionPoints', c.min_redemption_points, 'fundingRestricted', c.funding_restricted,
    'status', c.status, 'availablePointsPool', mr_pool_total(c.club_id),
    'fundedPoints', c.funded_points, 'burnedPoints', c.burned_points,
    'cashCapacityMinor', c.cash_capacity_minor)
  FROM clubs c WHERE c.club_id = p_club_id
$function$;
