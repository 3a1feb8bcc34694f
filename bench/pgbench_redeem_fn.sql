-- The redemption line's third row: the service's own SQL, SELECT
-- mr_write('redeem', ...) as the nginx module sends it, at the service's
-- number of connections, with no HTTP. 1 point for distinct members per
-- client (pgb-<client>-<1..16>, as mr_load --redeem), a new requestId and
-- idempotency key each.
\set m random(1, 16)
-- Any outcome but 'accepted' divides by zero: pgbench counts it as failed.
SELECT 1 / (r->>'outcome' = 'accepted')::int
FROM (SELECT mr_write('redeem', :club, 'bench', gen_random_uuid()::text, 'fp', 'pgbench',
    jsonb_build_object('partnerRef', 'bench', 'requestId', gen_random_uuid()::text,
                       'externalMemberId', 'pgb-' || :client_id || '-' || :m, 'points', 1, 'currency', 'GBP')) AS r) x;
