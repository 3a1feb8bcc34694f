-- Included (\ir) by the SQL tests that need committed data (dblink): a club
-- whose partner ref is :club_prefix-<txid>, so every run leaves its own
-- club behind, with members m0 .. m<:club_members - 1> and a pool of
-- :club_pool points. Its ref and id stay in the temp table test_club, and
-- pg_temp.settle_cmd builds a settle's command for one of its members.
CREATE TEMP TABLE test_club AS SELECT :'club_prefix' || '-' || txid_current() AS ref, NULL::bigint AS club;
WITH created AS (
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies)
  SELECT ref, 'Test', 100, '{GBP}' FROM test_club RETURNING club_id
)
UPDATE test_club SET club = (SELECT club_id FROM created);
INSERT INTO members (club_id, external_id, first_name, last_name, email)
SELECT club, 'm' || i, 'A', 'B', 'a@b.c' FROM test_club, generate_series(0, :club_members - 1) i;
SELECT mr_pool_topup(ref, :club_pool) IS NOT NULL AS club_topped_up FROM test_club \gset

CREATE FUNCTION pg_temp.settle_cmd(p_member text, p_tx text, p_amount bigint DEFAULT 1000) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object('partnerRef', ref, 'eventId', 'ev', 'occurredAt', '2026-11-22T10:00:00Z',
    'externalMemberId', p_member, 'externalTransactionId', p_tx, 'merchantId', 'shop', 'merchantName', 'Shop',
    'amountMinor', p_amount, 'currency', 'GBP', 'settledAt', '2026-11-22T10:00:00Z')
  FROM test_club
$$;
