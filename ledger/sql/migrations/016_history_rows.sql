-- History pages as plain rows, rendered by the module (ledger/history_render.cpp),
-- as the balance is since 006.
--
-- mr_points and mr_transactions (005) built jsonb in PL/pgSQL: 218 and
-- 253 µs of server time per page (docs/ledger-design.md), most of it the
-- jsonb, where a prepared keyset select of the same rows takes a tenth of
-- that. Each history is now one LANGUAGE sql
-- function of a single SELECT (the planner inlines it into the statement
-- that calls it, so a prepared statement keeps one plan with the page's
-- index reads in it) that resolves the member and reads the page:
--
-- - no row: the member does not exist (cardholder_not_found);
-- - one row whose columns are all NULL: the member exists, the page is
--   empty (LEFT JOIN LATERAL);
-- - otherwise up to limit + 1 rows, the extra one only saying that an
--   older page exists (the module cuts it and answers nextBefore = the
--   createdAt of the last row it keeps, null without the extra row).
--
-- The reads are 005's keyset reads: the cursor as the index key
-- (mr_cursor_key), each source newest first from an index matching the
-- order, stopped after limit + 1 rows, merged and cut to limit + 1. Rows
-- come newest first; no ORDER BY outside the LATERAL read (a sort node
-- there cost about a fifth of the statement), so the module checks the
-- order of what it gets and sorts if a plan ever delivered another.
--
-- p_limit is at most 100 (the API's cap): each source is read under a
-- constant LIMIT 101 and the page cut to p_limit + 1 above it. The
-- executor pulls rows, so no more than p_limit + 1 (+ 1 per merged
-- source) are read; the constant is for the planner. A LIMIT that is only
-- a parameter is costed at a tenth of the rows it might cover, which on
-- books with one large member made the generic plan of the prepared
-- statement look far dearer than a plan for the values at hand, and
-- PostgreSQL then planned every execution again (a first page of 10 for
-- a member with 1,000,000 entries, one session: 224 µs of backend CPU
-- against 58-90 µs with the plan kept). Bounded
-- by the constant, both plans cost alike and the generic one is kept
-- after the fifth execution (history_compare_test checks it).
--
-- Filtered points read each of the filter's entry types from
-- ledger_entries_member_type and merge them. Two reads, for the filter's
-- first and second type (mr_filter_types gives one type, or two for
-- `adjusted`; a read for a NULL type finds nothing at once): a merge of
-- reads that are each ordered by their index needs no sort, where 005's
-- unnest ... LATERAL did. tests/sql/history_paging.sql fails if a filter
-- ever names more than two types.
--
-- A reversal's merchant fields come from its transaction by primary key
-- (LATERAL ... LIMIT 1, as 005: with statistics that believe the tables
-- empty a join was planned as a walk of the whole index), looked up only
-- for the reversals of the page, after the cut.
--
-- mr_points and mr_transactions stay, now built on these reads, for the
-- modules of the previous release: an upgrade migrates first and reloads
-- nginx after (docs/operator-guide.md), and until then those workers still
-- call them. Nothing in this release calls them; a later migration may
-- drop them.

-- GET /api/v1/members/{id}/points without a filter (filter=all): one
-- backward range scan of UNIQUE (member_id, created_ms).
CREATE FUNCTION mr_points_rows(p_club_id bigint, p_member text, p_limit int, p_before bigint)
RETURNS TABLE (created_ms bigint, entry_id text, entry_type text, description text, delta_available bigint,
               delta_reserved bigint, cash_value_minor bigint, currency char(3), merchant_name text,
               merchant_id text, external_tx_id text, club_id bigint, group_ref text)
LANGUAGE sql STABLE AS $$
  SELECT e.created_ms, e.entry_id, e.entry_type, e.description, e.delta_available, e.delta_reserved,
         e.cash_value_minor, e.currency, e.merchant_name, e.merchant_id, e.external_tx_id, e.club_id, e.group_ref
  FROM members m
  LEFT JOIN LATERAL (
    SELECT * FROM (
      SELECT x.created_ms, x.entry_id, x.entry_type, x.description, x.delta_available, x.delta_reserved,
             x.cash_value_minor, x.currency, x.merchant_name, x.merchant_id, x.external_tx_id, x.club_id,
             x.group_ref
      FROM ledger_entries x
      WHERE x.member_id = m.member_id AND x.created_ms < mr_cursor_key(p_before)
      ORDER BY x.created_ms DESC LIMIT 101) u
    ORDER BY u.created_ms DESC LIMIT p_limit + 1) e ON true
  WHERE m.club_id = p_club_id AND m.external_id = p_member
$$;

-- GET /api/v1/members/{id}/points?filter=...: the filter's types (at most
-- two) each read from ledger_entries_member_type, merged. A filter that
-- names no type (all, or anything unknown) finds no entry.
CREATE FUNCTION mr_points_rows_filtered(p_club_id bigint, p_member text, p_filter text, p_limit int,
                                        p_before bigint)
RETURNS TABLE (created_ms bigint, entry_id text, entry_type text, description text, delta_available bigint,
               delta_reserved bigint, cash_value_minor bigint, currency char(3), merchant_name text,
               merchant_id text, external_tx_id text, club_id bigint, group_ref text)
LANGUAGE sql STABLE AS $$
  SELECT e.created_ms, e.entry_id, e.entry_type, e.description, e.delta_available, e.delta_reserved,
         e.cash_value_minor, e.currency, e.merchant_name, e.merchant_id, e.external_tx_id, e.club_id, e.group_ref
  FROM members m
  LEFT JOIN LATERAL (
    SELECT * FROM (SELECT * FROM (
      (SELECT x.created_ms, x.entry_id, x.entry_type, x.description, x.delta_available, x.delta_reserved,
              x.cash_value_minor, x.currency, x.merchant_name, x.merchant_id, x.external_tx_id, x.club_id,
              x.group_ref
       FROM ledger_entries x
       WHERE x.member_id = m.member_id AND x.entry_type = (mr_filter_types(p_filter))[1]
         AND x.created_ms < mr_cursor_key(p_before)
       ORDER BY x.created_ms DESC LIMIT 101)
      UNION ALL
      (SELECT x.created_ms, x.entry_id, x.entry_type, x.description, x.delta_available, x.delta_reserved,
              x.cash_value_minor, x.currency, x.merchant_name, x.merchant_id, x.external_tx_id, x.club_id,
              x.group_ref
       FROM ledger_entries x
       WHERE x.member_id = m.member_id AND x.entry_type = (mr_filter_types(p_filter))[2]
         AND x.created_ms < mr_cursor_key(p_before)
       ORDER BY x.created_ms DESC LIMIT 101)
    ) u ORDER BY u.created_ms DESC LIMIT 101) v
    ORDER BY v.created_ms DESC LIMIT p_limit + 1) e ON true
  WHERE m.club_id = p_club_id AND m.external_id = p_member
$$;

-- GET /api/v1/members/{id}/transactions: settled rows from
-- transactions_member and reversal rows from reversals_member, merged. A
-- settled row has tx_id NULL (its lookup finds nothing at once) and its own
-- merchant fields; a reversal row takes its transaction's. settled_at is
-- NULL on reversal rows.
CREATE FUNCTION mr_transactions_rows(p_club_id bigint, p_member text, p_limit int, p_before bigint)
RETURNS TABLE (created_ms bigint, reversed boolean, external_id text, event_id text, merchant_id text,
               merchant_name text, amount_minor bigint, currency char(3), points_delta bigint,
               occurred_at timestamptz, settled_at timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT p.ms, p.reversed, coalesce(t.external_id, p.external_id), p.event_id, coalesce(t.merchant_id, p.merchant_id),
         coalesce(t.merchant_name, p.merchant_name), p.amount_minor, coalesce(t.currency, p.currency), p.points_delta,
         p.occurred_at, p.settled_at
  FROM members m
  LEFT JOIN LATERAL (
    SELECT * FROM (SELECT * FROM (
      (SELECT x.created_ms AS ms, false AS reversed, NULL::bigint AS tx_id, x.external_id, x.event_id,
              x.merchant_id, x.merchant_name, x.amount_minor, x.currency, x.points AS points_delta,
              x.occurred_at, x.settled_at
       FROM transactions x
       WHERE x.member_id = m.member_id AND x.created_ms < mr_cursor_key(p_before)
       ORDER BY x.created_ms DESC LIMIT 101)
      UNION ALL
      (SELECT y.created_ms, true, y.tx_id, NULL, y.event_id, NULL, NULL, y.amount_minor, NULL, -y.points,
              y.occurred_at, NULL
       FROM reversals y
       WHERE y.member_id = m.member_id AND y.created_ms < mr_cursor_key(p_before)
       ORDER BY y.created_ms DESC LIMIT 101)
    ) u ORDER BY u.ms DESC LIMIT 101) v
    ORDER BY v.ms DESC LIMIT p_limit + 1) p ON true
  LEFT JOIN LATERAL (
    SELECT z.external_id, z.merchant_id, z.merchant_name, z.currency FROM transactions z
    WHERE z.tx_id = p.tx_id LIMIT 1) t ON true
  WHERE m.club_id = p_club_id AND m.external_id = p_member
$$;

-- 005's functions for the previous release's modules, on the reads above:
-- the same answers (tests/integration/history_compare_test.cpp compares
-- them with 005's text, page by page).
CREATE OR REPLACE FUNCTION mr_points(p_club_id bigint, p_member text, p_filter text, p_limit int,
                                     p_before bigint, p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT CASE WHEN count(*) = 0 THEN mr_fail('cardholder_not_found', p_request_id) ELSE mr_page(
      coalesce(jsonb_agg(jsonb_build_object(
        'id', r.entry_id, 'entryType', r.entry_type, 'description', r.description,
        'pointsDelta', r.delta_available + r.delta_reserved, 'pointsDeltaAvailable', r.delta_available,
        'pointsDeltaReserved', r.delta_reserved, 'cashValueMinor', r.cash_value_minor, 'currency', r.currency,
        'createdAt', mr_ms_text(r.created_ms), 'merchantName', r.merchant_name, 'merchantId', r.merchant_id,
        'externalTransactionId', r.external_tx_id, 'ledgerGroupId', r.club_id || ':' || r.group_ref)
        ORDER BY r.created_ms DESC) FILTER (WHERE r.created_ms IS NOT NULL), '[]'::jsonb),
      array_agg(r.created_ms ORDER BY r.created_ms DESC) FILTER (WHERE r.created_ms IS NOT NULL),
      p_limit, p_request_id) END
    FROM (SELECT * FROM mr_points_rows(p_club_id, p_member, p_limit, p_before)
          WHERE mr_filter_types(p_filter) IS NULL
          UNION ALL
          SELECT * FROM mr_points_rows_filtered(p_club_id, p_member, p_filter, p_limit, p_before)
          WHERE mr_filter_types(p_filter) IS NOT NULL) r);
END $$;

CREATE OR REPLACE FUNCTION mr_transactions(p_club_id bigint, p_member text, p_limit int, p_before bigint,
                                           p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (
    SELECT CASE WHEN count(*) = 0 THEN mr_fail('cardholder_not_found', p_request_id) ELSE mr_page(
      coalesce(jsonb_agg(CASE WHEN r.reversed THEN jsonb_build_object(
          'externalTransactionId', r.external_id, 'type', 'reversed', 'eventId', r.event_id,
          'merchantId', r.merchant_id, 'merchantName', r.merchant_name, 'amountMinor', r.amount_minor,
          'currency', r.currency, 'pointsDelta', r.points_delta, 'occurredAt', mr_ts_text(r.occurred_at),
          'createdAt', mr_ms_text(r.created_ms))
        ELSE jsonb_build_object(
          'externalTransactionId', r.external_id, 'type', 'settled', 'eventId', r.event_id,
          'merchantId', r.merchant_id, 'merchantName', r.merchant_name, 'amountMinor', r.amount_minor,
          'currency', r.currency, 'pointsDelta', r.points_delta, 'occurredAt', mr_ts_text(r.occurred_at),
          'settledAt', mr_ts_text(r.settled_at), 'createdAt', mr_ms_text(r.created_ms)) END
        ORDER BY r.created_ms DESC) FILTER (WHERE r.created_ms IS NOT NULL), '[]'::jsonb),
      array_agg(r.created_ms ORDER BY r.created_ms DESC) FILTER (WHERE r.created_ms IS NOT NULL),
      p_limit, p_request_id) END
    FROM mr_transactions_rows(p_club_id, p_member, p_limit, p_before) r);
END $$;
