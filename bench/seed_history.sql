-- A member with :n entries of history, written straight into the tables
-- (seconds for a million rows, where a million settled POSTs would take
-- minutes) and exactly as mr_write would have left them, so that
-- mrctl audit finds nothing: settled transactions of 10 points each, every
-- fourth one fully reversed (a reversal row, its entry, the transaction's
-- reversed figures), one entry per award and per reversal, the member's
-- balance caches, and the club's funded points raised by what the member
-- holds (as if the pool had been topped up and the awards taken from it).
-- psql -v club=ID -v member=EXTERNAL_ID -v n=ENTRIES -f seed_history.sql
\set ON_ERROR_STOP on
BEGIN;
INSERT INTO members (club_id, external_id, first_name, last_name, email)
VALUES (:club, :'member', 'Bench', 'History', 'history@example.com');
-- a awards and a/4 reversals make n entries.
SELECT member_id AS mid, (:n * 4 / 5) AS awards,
       (extract(epoch FROM now()) * 1000)::bigint - 2 * (:n * 4 / 5) - 1000 AS base
FROM members WHERE club_id = :club AND external_id = :'member' \gset
-- Award k at base + 2k, its reversal (if any) one millisecond later: every
-- createdAt distinct, all in the past.
INSERT INTO transactions (club_id, member_id, external_id, event_id, merchant_id, merchant_name, amount_minor,
                          currency, rate_bp, points, occurred_at, settled_at, reversed_amount, reversed_points,
                          created_ms)
SELECT :club, :mid, :'member' || '-tx-' || k, 'ev-' || k, 'm1', 'Bench Shop', 1000, 'GBP', 100, 10,
       now(), now(), CASE WHEN k % 4 = 0 THEN 1000 ELSE 0 END, CASE WHEN k % 4 = 0 THEN 10 ELSE 0 END,
       :base + 2 * k
FROM generate_series(1, :awards) k;
INSERT INTO reversals (tx_id, member_id, event_id, amount_minor, points, reason, occurred_at, created_ms)
SELECT tx_id, :mid, 'rev-' || external_id, 1000, 10, 'bench', now(), created_ms + 1
FROM transactions WHERE member_id = :mid AND reversed_amount > 0;
INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available, delta_reserved,
                            currency, merchant_name, merchant_id, external_tx_id, group_ref, created_ms)
SELECT 'le_' || lpad(to_hex(created_ms), 12, '0') || substr(md5(:mid || ':' || created_ms), 1, 12), :mid, :club,
       'earn_award', 'Points for Bench Shop', 10, 0, 'GBP', 'Bench Shop', 'm1', external_id, external_id, created_ms
FROM transactions WHERE member_id = :mid
UNION ALL
SELECT 'le_' || lpad(to_hex(r.created_ms), 12, '0') || substr(md5(:mid || ':' || r.created_ms), 1, 12), :mid, :club,
       'earn_reversal', 'Reversal at Bench Shop', -10, 0, 'GBP', 'Bench Shop', 'm1', t.external_id, t.external_id,
       r.created_ms
FROM reversals r JOIN transactions t USING (tx_id) WHERE r.member_id = :mid;
UPDATE members SET available = e.sum, lifetime_earned = e.sum, last_entry_ms = e.last
FROM (SELECT sum(delta_available) AS sum, max(created_ms) AS last FROM ledger_entries WHERE member_id = :mid) e
WHERE member_id = :mid;
UPDATE clubs SET funded_points = funded_points + (SELECT available FROM members WHERE member_id = :mid)
WHERE club_id = :club;
COMMIT;
ANALYZE members, transactions, reversals, ledger_entries;
