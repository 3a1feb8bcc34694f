-- The service's own settle batch at its largest: one SELECT mr_write_batch(...)
-- of 32 settles, as the nginx module sends it (ledger/statements.hpp's
-- write_batch with the planner settings; ledger/write_batch.cpp's array of
-- [op, club, partnerRef, key, fingerprint, requestId, command]), for the same
-- 32 members as pgbench_award_set.sql (client c: pgb-<2c|2c+1>-<1..16>): the
-- idempotency records, the members, the pool stripe, the entries, the
-- transactions, the results and the events, all of it. Against the set-based
-- award it shows what the ledger's rules cost PostgreSQL per settle when a
-- batch is as full as that floor's transaction, with no HTTP in front; run
-- it with at most 16 clients.
SELECT count(*) FROM mr_write_batch(CASE WHEN set_config('enable_seqscan', 'off', true) || set_config('jit', 'off', true)
                                        IS NOT NULL THEN
  (SELECT jsonb_agg(jsonb_build_array('settle', :club::text, 'bench', k.key, 'fp', 'pgbench', jsonb_build_object(
      'partnerRef', 'bench', 'eventId', 'ev', 'occurredAt', '2026-11-22T10:00:00Z',
      'externalMemberId', 'pgb-' || (2 * :client_id + k.n / 16) || '-' || (k.n % 16 + 1),
      'externalTransactionId', k.key, 'merchantId', 'm1', 'merchantName', 'Bench Shop',
      'amountMinor', 1000, 'currency', 'GBP', 'settledAt', '2026-11-22T10:00:00Z')) ORDER BY k.n)
   FROM (SELECT n, gen_random_uuid()::text AS key FROM generate_series(0, 31) n) k) END);
