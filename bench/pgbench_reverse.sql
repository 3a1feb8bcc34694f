-- The floor of the reversal line: the reversal transaction the ledger runs
-- (mr_do_reverse), as plain statements, without the idempotency record and
-- without the pool stripe (as pgbench_award_no_club.sql is the award's):
-- lock the member, lock its settled transaction, mark it wholly reversed,
-- append the earn_reversal entry and the reversal row, lower the member's
-- balance. Client c reverses rvp<round>-<c>-0, -1, ... (seeded by
-- seed_settled.sql; run with -D n=-1 -D round=R), of member
-- pgb-<c>-<n % 16 + 1>, as mr_load --reverse does (round R: rvp<R>- at 32 clients, rvp<R>s- at fewer); a transaction missing
-- (the seed ran short) aborts the client, which run_all.sh counts as failed.
\set n :n + 1
\set m :n % 16 + 1
BEGIN;
SELECT member_id FROM members WHERE club_id = :club AND external_id = 'pgb-' || :client_id || '-' || :m FOR UPDATE \gset
SELECT tx_id, points FROM transactions
WHERE club_id = :club AND external_id = 'rvp' || :round || '-' || :client_id || '-' || :n FOR UPDATE \gset
UPDATE transactions SET reversed_amount = amount_minor, reversed_points = points WHERE tx_id = :tx_id;
INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available, delta_reserved,
                            currency, merchant_name, merchant_id, external_tx_id, group_ref, created_ms)
VALUES ('le_pgb_' || gen_random_uuid(), :member_id, :club, 'earn_reversal', 'bench', 0 - :points, 0, 'GBP',
        'Bench Shop', 'm1', 'x', 'x', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
INSERT INTO reversals (tx_id, member_id, event_id, amount_minor, points, reason, occurred_at, created_ms)
VALUES (:tx_id, :member_id, 'e', 1000, :points, 'bench', now(), (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
UPDATE members SET available = available - :points, lifetime_earned = lifetime_earned - :points
WHERE member_id = :member_id;
END;
