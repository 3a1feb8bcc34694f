-- Included (\ir) by the SQL tests that write settles through mr_write:
-- pg_temp.settle builds a settled transaction's command, in the partner
-- API's shape, for a member and transaction of the club p_ref.
CREATE FUNCTION pg_temp.settle(p_ref text, p_member text, p_tx text, p_amount bigint,
                               p_currency text DEFAULT 'GBP') RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('partnerRef', p_ref, 'eventId', 'ev-' || p_tx, 'occurredAt', '2026-11-20T10:00:00Z',
    'externalMemberId', p_member, 'externalTransactionId', p_tx, 'merchantId', 'shop-1',
    'merchantName', 'Corner Shop', 'amountMinor', p_amount, 'currency', p_currency,
    'settledAt', '2026-11-21T10:00:00.250Z')
$$;
