-- The least the database must do for 16 deliveries, as the contract has
-- them made (bench/run_all.sh, events: the delivery floor), on copies of
-- webhook_deliveries and webhook_attempts (same columns, defaults and
-- indexes; seeded with pending deliveries enough for the line):
--   1. the claim, committed before anything is sent so that no other
--      worker or node sends the same attempt: the 16 first due deliveries
--      by the due index, skipping those another session holds, leased
--      past the send;
--   2. the report: each delivery marked delivered (never sent again) and
--      its attempt recorded (the deliveries API lists every attempt).
-- None of what the service does beside that: no endpoint row, no event
-- body read, no signature, no wake-up, no lookups. A client whose claim
-- found nothing fails its transaction (no id to report), and so the line.
BEGIN;
WITH due AS (
  SELECT delivery_id FROM bench_deliveries
  WHERE state = 'pending' AND next_at <= now()
  ORDER BY next_at LIMIT 16
  FOR UPDATE SKIP LOCKED
),
claimed AS (
  UPDATE bench_deliveries d SET attempts = d.attempts + 1, next_at = now() + interval '45 s'
  FROM due WHERE d.delivery_id = due.delivery_id
  RETURNING d.delivery_id
)
SELECT array_agg(delivery_id) AS ids FROM claimed \gset
END;
BEGIN;
UPDATE bench_deliveries SET state = 'delivered', next_at = NULL WHERE delivery_id = ANY (:ids::bigint[]);
INSERT INTO bench_attempts (endpoint_id, attempted_ms, event_no, attempt, status, error, duration_ms)
SELECT 'we_bench_' || :client_id, t.us * 16 + k.n, k.id, 1, 204, NULL, 1
FROM (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us) t,
     unnest(:ids::bigint[]) WITH ORDINALITY k(id, n);
END;
