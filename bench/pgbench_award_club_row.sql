-- The rejected design, kept as a floor to compare with: the award of
-- pgbench_award_no_club.sql plus one update of the club's row (a single
-- points pool on the club), held locked until commit by every award of
-- every member of the club. Distinct members per client (:client_id).
\set m random(1, 16)
BEGIN;
SELECT member_id FROM members WHERE club_id = :club AND external_id = 'pgb-' || :client_id || '-' || :m FOR UPDATE \gset
UPDATE clubs SET funded_points = funded_points - 10 WHERE club_id = :club AND funded_points >= 10;
INSERT INTO transactions (club_id, member_id, external_id, event_id, merchant_id, merchant_name, amount_minor,
                          currency, rate_bp, points, occurred_at, settled_at, created_ms)
VALUES (:club, :member_id, 'pgb-' || gen_random_uuid(), 'e', 'm1', 'Bench Shop', 1000, 'GBP', 100, 10,
        now(), now(), 0);
INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available, delta_reserved,
                            currency, group_ref, created_ms)
VALUES ('le_pgb_' || gen_random_uuid(), :member_id, :club, 'earn_award', 'bench', 10, 0, 'GBP', 'x',
        (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
UPDATE members SET available = available + 10, lifetime_earned = lifetime_earned + 10 WHERE member_id = :member_id;
END;
