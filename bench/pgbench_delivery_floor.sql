-- The least one pass of the delivery engine can write for 16 deliveries
-- that ended (bench/run_all.sh, events: the delivery floor): their attempt
-- rows, as webhook_attempts keeps them, and each delivery's state changed
-- so it is never sent again, on copies of webhook_deliveries and
-- webhook_attempts (same columns, defaults and indexes; no claim, no
-- endpoint row, no lookup). Client c owns deliveries 16c+1 .. 16c+16 and
-- flips them between pending and delivered, so every transaction moves
-- their entries in and out of the due index as a claim and a report do
-- between them. Run it with at most 4 clients (64 rows are seeded).
BEGIN;
UPDATE bench_deliveries
SET state = CASE state WHEN 'pending' THEN 'delivered' ELSE 'pending' END,
    next_at = CASE state WHEN 'pending' THEN NULL ELSE now() END, attempts = attempts + 1
WHERE delivery_id BETWEEN 16 * :client_id + 1 AND 16 * :client_id + 16;
INSERT INTO bench_attempts (endpoint_id, attempted_ms, event_no, attempt, status, error, duration_ms)
SELECT 'we_bench_' || :client_id, t.us * 16 + k, 16 * :client_id + k + 1, 1, 204, NULL, 1
FROM (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us) t, generate_series(0, 15) k;
END;
