CREATE OR REPLACE FUNCTION mr_transactions(p_club_id bigint, p_member text, p_limit integer, p_before bigint, p_request_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
  RETURN (
    SELECT CASE WHEN count(*) = 0 THEN mr_fail('cardholder_not_found', p_request_id) ELSE mr_page(
      coalesce(jsonb_agg(CASE WHEN r.reversed THEN jsonb_build_object(
          'externalTransactionId', r.external_id, 'type', 'reversed', 'eventId', r.event_id,
          'merchantId', r.merchant_id, 'merchantName', r.merchant_name, 'amountMinor', r.amount_minor,
          'currency', r.currency, 'pointsDelta', r.points_delta, 'occurredAt', mr_ts_text(r.occurred_at),
          'createdAt', mr_ms_text(r.created_ms))
        ELSE jsonb_build_object(
          'externalTransactionId', r.external_id, 'type', 'settled', 'eventId', r.event_id,
          'merchantId', r.merchant_id, 'merchantName', r.merchant_name, 'amountMinor', r.amount_minor,
          'currency', r.currency, 'pointsDelta', r.points_delta, 'occurredAt', mr_ts_text(r.occurred_at),
          'settledAt', mr_ts_text(r.settled_at), 'createdAt', mr_ms_text(r.created_ms)) END
        ORDER BY r.created_ms DESC) FILTER (WHERE r.created_ms IS NOT NULL), '[]'::jsonb),
      array_agg(r.created_ms ORDER BY r.created_ms DESC) FILTER (WHERE r.created_ms IS NOT NULL),
      p_limit, p_request_id) END
    FROM mr_transactions_rows(p_club_id, p_member, p_limit, p_before) r);
END $function$;
