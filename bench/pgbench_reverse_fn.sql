-- The reversal line's third row: the service's own SQL, SELECT
-- mr_write('reverse', ...) as the nginx module sends it (idempotency
-- record, member, transaction, entry, reversal row, pool stripe, event,
-- result jsonb), at the service's number of connections, with no HTTP: what
-- the module adds is the API row's distance from this one. Client c
-- reverses rvf<round>-<c>-0, -1, ... (seed_settled.sql; -D n=-1 -D round=R)
-- of member pgb-<c>-<n % 16 + 1>, as mr_load --reverse does.
\set n :n + 1
\set m :n % 16 + 1
-- Any outcome but 'ok' divides by zero: pgbench counts it as failed.
SELECT 1 / (r->>'outcome' = 'ok')::int
FROM (SELECT mr_write('reverse', :club, 'bench', 'pgbf-' || :round || '-' || :client_id || '-' || :n, 'fp', 'pgbench',
    jsonb_build_object('partnerRef', 'bench', 'eventId', 'e', 'occurredAt', '2026-11-20T10:00:00Z',
                       'externalMemberId', 'pgb-' || :client_id || '-' || :m,
                       'externalTransactionId', 'rvf' || :round || '-' || :client_id || '-' || :n,
                       'currency', 'GBP', 'reason', 'bench')) AS r) x;
