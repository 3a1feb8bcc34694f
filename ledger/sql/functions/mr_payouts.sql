CREATE OR REPLACE FUNCTION mr_payouts(p_status text, p_limit integer DEFAULT 100)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce(jsonb_agg(j ORDER BY created_at), '[]'::jsonb) FROM (
    SELECT p.created_at, jsonb_build_object('payoutId', p.payout_id, 'status', p.status,
      'redemptionId', p.redemption_id, 'partnerRef', c.partner_ref, 'cashValueMinor', r.cash_value_minor,
      'currency', r.currency, 'accountNumber', p.account_number, 'sortCode', p.sort_code,
      'accountName', p.account_name, 'createdAt', mr_ts_text(p.created_at)) AS j
    FROM payouts p JOIN redemptions r USING (redemption_id) JOIN clubs c ON c.club_id = p.club_id
    WHERE p_status IS NULL OR p.status = p_status
    ORDER BY p.created_at LIMIT p_limit) x
$function$;
