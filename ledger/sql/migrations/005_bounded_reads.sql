-- Indexes for history reads whose cost does not grow with the member's
-- history (mr_points_rows, mr_points_rows_filtered, mr_transactions_rows)
-- and for an audit of one club bounded by that club's size (mr_audit_club).
--
-- ledger_entries_member (member_id, created_ms DESC) duplicated the UNIQUE
-- (member_id, created_ms) index (a btree is read backwards just as well),
-- so it is dropped and the filter index takes its place: writes keep the
-- same number of indexes. CREATE INDEX takes a SHARE lock on its table
-- while it builds, which blocks every points-changing request for that time
-- (about 3.5 s per million entries measured; docs/operator-guide.md: on
-- large books build both beforehand with CREATE INDEX CONCURRENTLY under
-- the same names, then these are no-ops).

CREATE INDEX IF NOT EXISTS ledger_entries_member_type
  ON ledger_entries (member_id, entry_type, created_ms DESC);
DROP INDEX IF EXISTS ledger_entries_member;
-- A transaction's reversal rows, for the audit of one club (below).
CREATE INDEX IF NOT EXISTS reversals_tx ON reversals (tx_id);
