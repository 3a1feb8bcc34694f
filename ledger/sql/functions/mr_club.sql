-- GET /api/v1/club: the calling key's club as partners need it. A setting
-- not made yet (no redemption rate, no payout currency) is null; the
-- environment is the deployment's, which the glue passes.
CREATE OR REPLACE FUNCTION mr_club(p_club_id bigint, p_environment text, p_request_id text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce((
    SELECT mr_ok('ok', p_request_id, jsonb_build_object(
      'partnerRef', c.partner_ref, 'name', c.name, 'environment', nullif(p_environment, ''),
      'earnRateBasisPoints', c.earn_rate_bp, 'redemptionRateMinorPerPoint', c.redemption_rate_minor,
      'payoutCurrency', c.payout_currency, 'supportedCurrencies', to_jsonb(c.currencies),
      'minimumRedemptionPoints', c.min_redemption_points, 'availablePointsPool', mr_pool_total(c.club_id)))
    FROM clubs c WHERE c.club_id = p_club_id),
    mr_fail('partner_not_found', p_request_id))
$function$;
