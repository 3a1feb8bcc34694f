-- Settled transactions for the reversal lines of bench/run_all.sh, written
-- straight into the tables as seed_history.sql writes its awards (mr_write
-- settled about 230 a second here, all in one transaction: 82 s for the
-- smoke run's 19,200): for each prefix P of :prefixes (comma-separated),
-- transaction P<c>-<s> of member pgb-<c>-<s % 16 + 1>, 1000 minor units at
-- 100 bp (10 points), for connections or clients c 0..conns-1 and s 0..n-1, what
-- mr_load --reverse and pgbench_reverse.sql reverse, in order. Each with
-- its earn_award entry (createdAt distinct, about 11 days in the past, below
-- every entry the bench writes), the members' balance caches raised by
-- their awards and the club's funded points by the total, as if the pool
-- had been topped up and the awards taken from it: the books a reversal
-- finds are the ones settled POSTs leave. Prints how many were written.
-- Vacuumed at the end, so that autovacuum does not take up the new rows
-- during the first timed slice, which is always the 32-client floor's.
-- psql -v club=ID -v prefixes=P1,P2,... -v conns=C -v n=COUNT -v from=F -f seed_settled.sql
-- F: how many rows earlier calls of the same run wrote (their createdAt
-- came first; the same members' rows must not share a millisecond).
\set ON_ERROR_STOP on
BEGIN;
CREATE TEMP TABLE seed ON COMMIT DROP AS
SELECT k.ext, m.member_id, (extract(epoch FROM now()) * 1000)::bigint - 1000000000 + :from + k.i AS ms
FROM (SELECT p || c || '-' || s AS ext, 'pgb-' || c || '-' || (s % 16 + 1) AS member,
             row_number() OVER () AS i
      FROM unnest(string_to_array(:'prefixes', ',')) p, generate_series(0, :conns - 1) c, generate_series(0, :n - 1) s) k
JOIN members m ON m.club_id = :club AND m.external_id = k.member;
INSERT INTO transactions (club_id, member_id, external_id, event_id, merchant_id, merchant_name, amount_minor,
                          currency, rate_bp, points, occurred_at, settled_at, created_ms)
SELECT :club, member_id, ext, 'seed-' || ext, 'm1', 'Bench Shop', 1000, 'GBP', 100, 10, now(), now(), ms FROM seed;
INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available, delta_reserved,
                            currency, merchant_name, merchant_id, external_tx_id, group_ref, created_ms)
SELECT 'le_' || lpad(to_hex(ms), 12, '0') || substr(md5(member_id || ':' || ms), 1, 12), member_id, :club,
       'earn_award', 'Points for Bench Shop', 10, 0, 'GBP', 'Bench Shop', 'm1', ext, ext, ms
FROM seed;
UPDATE members m SET available = available + a.points, lifetime_earned = lifetime_earned + a.points
FROM (SELECT member_id, 10 * count(*) AS points FROM seed GROUP BY member_id) a WHERE m.member_id = a.member_id;
UPDATE clubs SET funded_points = funded_points + 10 * (SELECT count(*) FROM seed) WHERE club_id = :club;
SELECT count(*) FROM seed;
COMMIT;
VACUUM (ANALYZE) transactions, ledger_entries, members;
