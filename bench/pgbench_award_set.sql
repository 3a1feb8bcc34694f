-- The settle floor's award (pgbench_award_no_club.sql) done set-based for
-- 32 members in one transaction: the most this schema commits a second on
-- the machine. One statement locks the client's 32
-- members in member_id order, one inserts their transactions, one their
-- entries, one updates their balances. Client c uses the members of mr_load's
-- clients 2c and 2c+1 (pgb-<2c|2c+1>-<1..16>), so run it with at most 16
-- clients; a transaction is 32 awards. The members are found by their
-- index (= ANY of an array; IN over the series planned a scan of them all).
BEGIN;
SELECT array_agg(member_id ORDER BY member_id) AS ids FROM (
  SELECT member_id FROM members
  WHERE club_id = :club AND external_id = ANY (ARRAY(SELECT 'pgb-' || (2 * :client_id + k / 16) || '-' || (k % 16 + 1)
                                                   FROM generate_series(0, 31) k))
  ORDER BY member_id FOR UPDATE) m \gset
INSERT INTO transactions (club_id, member_id, external_id, event_id, merchant_id, merchant_name, amount_minor,
                          currency, rate_bp, points, occurred_at, settled_at, created_ms)
SELECT :club, id, 'pgs-' || gen_random_uuid(), 'e', 'm1', 'Bench Shop', 1000, 'GBP', 100, 10, now(), now(), 0
FROM unnest(:ids::bigint[]) id;
INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available, delta_reserved,
                            currency, group_ref, created_ms)
SELECT 'le_pgs_' || gen_random_uuid(), id, :club, 'earn_award', 'bench', 10, 0, 'GBP', 'x',
       (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
FROM unnest(:ids::bigint[]) id;
UPDATE members SET available = available + 10, lifetime_earned = lifetime_earned + 10
WHERE member_id = ANY (:ids::bigint[]);
END;
