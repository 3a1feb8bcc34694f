-- History reads whose cost does not grow with the member's history, and an
-- audit of one club bounded by that club's size.
--
-- mr_transactions (002) built a jsonb object for every settled and reversed
-- row of the member, sorted them all and only then kept limit + 1: about
-- 26 s for the first page of a member with 1,000,000 entries. mr_points
-- wrote the cursor as (p_before IS NULL OR created_ms < p_before): once
-- PL/pgSQL switches to its cached generic plan that is a filter, not an
-- index bound, so a page deep in the history walked every newer entry;
-- and a filter (say `reversed` among a million awards) walked the member's
-- whole history to find limit + 1 matches.
--
-- Now every page is a keyset read: the cursor is turned into the index key
-- (no cursor = the largest bigint, so one plan serves both), each source is
-- read newest first from an index on (member_id[, entry_type], created_ms)
-- bounded by created_ms < cursor and LIMIT limit + 1, and jsonb is built
-- only for the rows of the page. A page costs O(limit) index and heap
-- reads whatever the history's length. Names, arguments and results are
-- unchanged (same objects, same order, same nextBefore), so callers do not
-- change and responses stay byte for byte the same.
--
-- Indexes: ledger_entries_member (member_id, created_ms DESC) duplicated
-- the UNIQUE (member_id, created_ms) index (a btree is read backwards just
-- as well), so it is dropped and the filter index takes its place: writes
-- keep the same number of indexes. transactions_member and reversals_member
-- (002) already match their order. reversals_tx is new (the audit of one
-- club). CREATE INDEX takes a SHARE lock on its table while it builds, which
-- blocks every points-changing request for that time (about 3.5 s per
-- million entries measured; docs/operator-guide.md: on large books build
-- both beforehand with CREATE INDEX CONCURRENTLY under the same names, then
-- these are no-ops).

CREATE INDEX IF NOT EXISTS ledger_entries_member_type
  ON ledger_entries (member_id, entry_type, created_ms DESC);
DROP INDEX IF EXISTS ledger_entries_member;
-- A transaction's reversal rows, for the audit of one club (below).
CREATE INDEX IF NOT EXISTS reversals_tx ON reversals (tx_id);

-- A history cursor as the index key: no cursor means from the newest.
CREATE FUNCTION mr_cursor_key(p_before bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(p_before, 9223372036854775807)
$$;

-- GET /api/v1/members/{id}/points: newest first, strictly older than
-- p_before; nextBefore is null when no older entry exists. Unfiltered, one
-- backward range scan of UNIQUE (member_id, created_ms); filtered, one per
-- entry type on ledger_entries_member_type, merged, so a rare type is found
-- without walking the others.
CREATE OR REPLACE FUNCTION mr_points(p_club_id bigint, p_member text, p_filter text, p_limit int,
                                     p_before bigint, p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_member_id bigint;
  v_types text[] := mr_filter_types(p_filter);
  v_key bigint := mr_cursor_key(p_before);
  v_rows jsonb;
  v_ms bigint[];
BEGIN
  SELECT member_id INTO v_member_id FROM members WHERE club_id = p_club_id AND external_id = p_member;
  IF v_member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  -- The page is at most limit + 1 rows; jsonb is built for those alone.
  -- Exactly one branch reads: the first only without a filter (a one-time
  -- check, also in the generic plan), the second once per filtered type.
  SELECT coalesce(jsonb_agg(jsonb_build_object(
           'id', entry_id, 'entryType', entry_type, 'description', description,
           'pointsDelta', delta_available + delta_reserved, 'pointsDeltaAvailable', delta_available,
           'pointsDeltaReserved', delta_reserved, 'cashValueMinor', cash_value_minor, 'currency', currency,
           'createdAt', mr_ms_text(created_ms), 'merchantName', merchant_name, 'merchantId', merchant_id,
           'externalTransactionId', external_tx_id, 'ledgerGroupId', club_id || ':' || group_ref)
           ORDER BY created_ms DESC), '[]'::jsonb),
         array_agg(created_ms ORDER BY created_ms DESC)
    INTO v_rows, v_ms
  FROM (
    SELECT * FROM (
      (SELECT * FROM ledger_entries x
       WHERE v_types IS NULL AND x.member_id = v_member_id AND x.created_ms < v_key
       ORDER BY x.created_ms DESC LIMIT p_limit + 1)
      UNION ALL
      (SELECT y.* FROM unnest(v_types) t (entry_type)
       CROSS JOIN LATERAL (
         SELECT * FROM ledger_entries x
         WHERE x.member_id = v_member_id AND x.entry_type = t.entry_type AND x.created_ms < v_key
         ORDER BY x.created_ms DESC LIMIT p_limit + 1) y)
    ) u ORDER BY created_ms DESC LIMIT p_limit + 1) page;
  RETURN mr_page(v_rows, v_ms, p_limit, p_request_id);
END $$;

-- GET /api/v1/members/{id}/transactions: settled and reversed rows, newest
-- first. Each source gives at most limit + 1 rows from its
-- (member_id, created_ms) index below the cursor; the merged page is cut to
-- limit + 1 and only its rows are turned into jsonb. A reversal's merchant
-- fields come from its transaction, looked up by primary key per reversal
-- read: a LATERAL ... LIMIT 1 rather than a join, because with statistics
-- that believe the tables empty (new books, before autovacuum's first
-- analyse) the planner joined them by walking the whole primary key index.
CREATE OR REPLACE FUNCTION mr_transactions(p_club_id bigint, p_member text, p_limit int, p_before bigint,
                                           p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_member_id bigint;
  v_key bigint := mr_cursor_key(p_before);
  v_rows jsonb;
  v_ms bigint[];
BEGIN
  SELECT member_id INTO v_member_id FROM members WHERE club_id = p_club_id AND external_id = p_member;
  IF v_member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  SELECT coalesce(jsonb_agg(CASE WHEN reversed THEN jsonb_build_object(
             'externalTransactionId', external_id, 'type', 'reversed', 'eventId', event_id,
             'merchantId', merchant_id, 'merchantName', merchant_name, 'amountMinor', amount_minor,
             'currency', currency, 'pointsDelta', points_delta, 'occurredAt', mr_ts_text(occurred_at),
             'createdAt', mr_ms_text(ms))
           ELSE jsonb_build_object(
             'externalTransactionId', external_id, 'type', 'settled', 'eventId', event_id,
             'merchantId', merchant_id, 'merchantName', merchant_name, 'amountMinor', amount_minor,
             'currency', currency, 'pointsDelta', points_delta, 'occurredAt', mr_ts_text(occurred_at),
             'settledAt', mr_ts_text(settled_at), 'createdAt', mr_ms_text(ms)) END
           ORDER BY ms DESC), '[]'::jsonb),
         array_agg(ms ORDER BY ms DESC)
    INTO v_rows, v_ms
  FROM (
    SELECT * FROM (
      (SELECT x.created_ms AS ms, false AS reversed, x.external_id, x.event_id, x.merchant_id, x.merchant_name,
              x.amount_minor, x.currency, x.points AS points_delta, x.occurred_at, x.settled_at
       FROM transactions x
       WHERE x.member_id = v_member_id AND x.created_ms < v_key
       ORDER BY x.created_ms DESC LIMIT p_limit + 1)
      UNION ALL
      (SELECT y.created_ms, true, t.external_id, y.event_id, t.merchant_id, t.merchant_name,
              y.amount_minor, t.currency, -y.points, y.occurred_at, NULL
       FROM reversals y
       CROSS JOIN LATERAL (SELECT * FROM transactions z WHERE z.tx_id = y.tx_id LIMIT 1) t
       WHERE y.member_id = v_member_id AND y.created_ms < v_key
       ORDER BY y.created_ms DESC LIMIT p_limit + 1)
    ) u ORDER BY ms DESC LIMIT p_limit + 1) page;
  RETURN mr_page(v_rows, v_ms, p_limit, p_request_id);
END $$;

-- mrctl audit --club: the audit of one club, reading only that club's rows
-- (its members by UNIQUE (club_id, external_id), their entries, reversals
-- and pending redemptions by member, its transactions by UNIQUE (club_id,
-- external_id) and their reversal rows by reversals_tx, its 16 stripes), so
-- its cost follows the club's size, not the whole books'. The checks and
-- messages are 003's mr_audit, club by club.
--
-- Planned for this club at every call (EXECUTE): a cached generic plan
-- assumes an average club and read the whole books for a small one. Without
-- sequential scans: a member's rows are summed through its index, never by
-- scanning the table, even where the statistics' average member is huge
-- (measured: 3.7 s for an 11-entry club next to a 1,000,001-entry member,
-- the whole ledger_entries scanned once per member). Without JIT: those
-- statistics make the plan look expensive enough to compile, which took
-- 0.4 s of a 0.4 s audit.
CREATE FUNCTION mr_audit_club(p_club_id bigint) RETURNS SETOF text LANGUAGE plpgsql STABLE
SET enable_seqscan = off SET jit = off AS $f$
BEGIN
  RETURN QUERY EXECUTE $q$
    WITH c AS (SELECT * FROM clubs WHERE club_id = $1),
    m AS (
      SELECT m.member_id, m.external_id, m.available, m.reserved, m.lifetime_earned, m.lifetime_redeemed,
             coalesce(e.avail, 0) AS e_avail, coalesce(e.res, 0) AS e_res, coalesce(e.earned, 0) AS e_earned,
             coalesce(e.burned, 0) AS e_burned, coalesce(p.held, 0) AS held
      FROM members m
      CROSS JOIN LATERAL (
        SELECT sum(delta_available) AS avail, sum(delta_reserved) AS res,
               sum(delta_available) FILTER (WHERE entry_type IN ('earn_award', 'earn_reversal')) AS earned,
               -sum(delta_reserved) FILTER (WHERE entry_type = 'redeem_burn') AS burned
        FROM ledger_entries WHERE member_id = m.member_id) e
      CROSS JOIN LATERAL (
        SELECT sum(points) AS held FROM redemptions WHERE member_id = m.member_id AND status = 'payout_pending') p
      WHERE m.club_id = $1)
    SELECT format('member %s of club %s: balances %s/%s, entries sum to %s/%s', m.external_id, c.partner_ref,
                  m.available, m.reserved, m.e_avail, m.e_res)
    FROM m, c WHERE m.available <> m.e_avail OR m.reserved <> m.e_res
    UNION ALL
    SELECT format('member %s of club %s: lifetime earned %s, award entries sum to %s', m.external_id,
                  c.partner_ref, m.lifetime_earned, m.e_earned)
    FROM m, c WHERE m.lifetime_earned <> m.e_earned
    UNION ALL
    SELECT format('member %s of club %s: lifetime redeemed %s, burn entries sum to %s', m.external_id,
                  c.partner_ref, m.lifetime_redeemed, m.e_burned)
    FROM m, c WHERE m.lifetime_redeemed <> m.e_burned
    UNION ALL
    SELECT format('member %s of club %s: reserved %s, pending redemptions hold %s', m.external_id,
                  c.partner_ref, m.reserved, m.held)
    FROM m, c WHERE m.reserved <> m.held
    UNION ALL
    SELECT format('club %s: burned %s, members redeemed %s', c.partner_ref, c.burned_points,
                  (SELECT coalesce(sum(lifetime_redeemed), 0) FROM m))
    FROM c WHERE c.burned_points <> (SELECT coalesce(sum(lifetime_redeemed), 0) FROM m)
    UNION ALL
    SELECT format('club %s: %s pool stripes, not 16', c.partner_ref, s.n)
    FROM c, (SELECT count(*) AS n FROM club_pool_stripes WHERE club_id = $1) s WHERE s.n <> 16
    UNION ALL
    SELECT format('club %s: pool %s + members %s + burned %s <> funded %s', c.partner_ref, p.pool, h.held,
                  c.burned_points, c.funded_points)
    FROM c, (SELECT coalesce(sum(points), 0) AS pool FROM club_pool_stripes WHERE club_id = $1) p,
         (SELECT coalesce(sum(available + reserved), 0) AS held FROM m) h
    WHERE p.pool + h.held + c.burned_points <> c.funded_points
    UNION ALL
    SELECT format('transaction %s of club %s: points %s/reversed %s, entries %s/%s; amount reversed %s, reversal rows %s/%s',
                  t.external_id, c.partner_ref, t.points, t.reversed_points, coalesce(e.award, 0),
                  coalesce(e.reversal, 0), t.reversed_amount, coalesce(r.amount, 0), coalesce(r.points, 0))
    FROM c, transactions t
    LEFT JOIN (SELECT x.member_id, x.external_tx_id,
                      sum(x.delta_available) FILTER (WHERE x.entry_type = 'earn_award') AS award,
                      -sum(x.delta_available) FILTER (WHERE x.entry_type = 'earn_reversal') AS reversal
               FROM m JOIN ledger_entries x ON x.member_id = m.member_id
               WHERE x.entry_type IN ('earn_award', 'earn_reversal')
               GROUP BY x.member_id, x.external_tx_id) e
      ON e.member_id = t.member_id AND e.external_tx_id = t.external_id
    LEFT JOIN (SELECT y.tx_id, sum(y.amount_minor) AS amount, sum(y.points) AS points
               FROM transactions x JOIN reversals y ON y.tx_id = x.tx_id
               WHERE x.club_id = $1 GROUP BY y.tx_id) r ON r.tx_id = t.tx_id
    WHERE t.club_id = $1
      AND (e.award IS DISTINCT FROM t.points OR coalesce(e.reversal, 0) <> t.reversed_points
           OR coalesce(r.amount, 0) <> t.reversed_amount OR coalesce(r.points, 0) <> t.reversed_points)
  $q$ USING p_club_id;
END $f$;

-- mrctl audit --club's summary: the club's members and their entries,
-- counted through the indexes (as mr_audit_club, no sequential scan).
CREATE FUNCTION mr_club_counts(p_club_id bigint) RETURNS jsonb LANGUAGE sql STABLE
SET enable_seqscan = off SET jit = off AS $$
  SELECT jsonb_build_object('members', count(*), 'entries', coalesce(sum(e.n), 0))
  FROM members m CROSS JOIN LATERAL (SELECT count(*) AS n FROM ledger_entries x WHERE x.member_id = m.member_id) e
  WHERE m.club_id = p_club_id
$$;

-- mrctl audit: every club's audit. Every row belongs to a member or a club,
-- so this covers the whole books; it costs the sum of the clubs' audits.
CREATE OR REPLACE FUNCTION mr_audit() RETURNS SETOF text LANGUAGE sql STABLE AS $$
  SELECT a FROM clubs c CROSS JOIN LATERAL mr_audit_club(c.club_id) a
$$;
