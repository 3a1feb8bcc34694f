-- The ledger's real award: one SELECT mr_write('settle', ...) as the nginx
-- module sends it (idempotency record, member row, pool stripe, entry,
-- transaction, result jsonb), for distinct members per client (:client_id)
-- of one club. 1000 minor units at 100 bp: 10 points.
\set m random(1, 16)
SELECT mr_write('settle', :club, (SELECT partner_ref FROM clubs WHERE club_id = :club), gen_random_uuid()::text,
                'fp', 'pgbench', jsonb_build_object(
  'partnerRef', (SELECT partner_ref FROM clubs WHERE club_id = :club), 'eventId', 'ev',
  'occurredAt', '2026-11-22T10:00:00Z', 'externalMemberId', 'pgb-' || :client_id || '-' || :m,
  'externalTransactionId', gen_random_uuid()::text, 'merchantId', 'm1', 'merchantName', 'Bench Shop',
  'amountMinor', 1000, 'currency', 'GBP', 'settledAt', '2026-11-22T10:00:00Z'));
