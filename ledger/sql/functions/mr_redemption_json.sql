-- A redemption as GET /api/v1/redemptions/{id} shows it, with createdAt
-- from created_ms: always the value the list's cursor pages by.
CREATE OR REPLACE FUNCTION mr_redemption_json(p_redemption text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object(
    'redemptionId', r.redemption_id, 'requestId', r.request_id, 'status', r.status,
    'externalMemberId', m.external_id, 'pointsRedeemed', r.points, 'cashValueMinor', r.cash_value_minor,
    'currency', r.currency,
    'payout', jsonb_build_object('payoutId', p.payout_id, 'status', p.status, 'failureReason', p.failure_reason),
    'createdAt', mr_ms_text(r.created_ms), 'updatedAt', mr_ts_text(r.updated_at))
  FROM redemptions r JOIN members m USING (member_id) JOIN payouts p USING (redemption_id)
  WHERE r.redemption_id = p_redemption
$function$;
