-- The club move's reads and removals through the indexes (issue 29, item 3;
-- 020_club_move.sql, tools/mrctl/cmd_club_move.cpp). 020 found a club's
-- ledger entries and payouts by club_id, which no index of theirs leads
-- with: a sequential scan of the pod's every entry inside the move's pause,
-- which then grew with the pod rather than with the club. Here entries are
-- reached through the club's members (UNIQUE (club_id, external_id)) and
-- each member's (member_id, created_ms) index, and payouts through the
-- club's redemptions (redemptions_club_created) and their UNIQUE
-- (redemption_id), as mr_audit_club (005) reads them; no index is added, so
-- a settle writes what it wrote before. Webhook deliveries are still found
-- by club_id: no index reaches them from the club without one more index on
-- the table every settle of a club with an endpoint inserts into.
-- tests/sql/club_move_plans.sql shows the plans.

CREATE OR REPLACE FUNCTION mr_club_summary(p_club_id bigint) RETURNS jsonb LANGUAGE sql STABLE
SET enable_seqscan = off SET jit = off AS $$
  SELECT jsonb_build_object(
    'club', (SELECT to_jsonb(c) - 'pod' - 'moving' - 'updated_at' - 'created_at' FROM clubs c WHERE club_id = p_club_id),
    'pool', (SELECT sum(points) FROM club_pool_stripes WHERE club_id = p_club_id),
    'members', (SELECT jsonb_build_array(count(*), sum(available), sum(reserved), sum(lifetime_earned),
                                         sum(lifetime_redeemed), sum(event_seq))
                FROM members WHERE club_id = p_club_id),
    'wallets', (SELECT count(*) FROM wallets JOIN members USING (member_id) WHERE club_id = p_club_id),
    'transactions', (SELECT jsonb_build_array(count(*), sum(points), sum(reversed_points))
                     FROM transactions WHERE club_id = p_club_id),
    'reversals', (SELECT count(*) FROM reversals JOIN transactions USING (tx_id) WHERE club_id = p_club_id),
    'entries', (SELECT jsonb_build_array(count(*), sum(e.delta_available), sum(e.delta_reserved))
                FROM members m JOIN ledger_entries e ON e.member_id = m.member_id WHERE m.club_id = p_club_id),
    'idempotency', (SELECT count(*) FROM idempotency_records WHERE club_id = p_club_id),
    'redemptions', (SELECT count(*) FROM redemptions WHERE club_id = p_club_id),
    'payouts', (SELECT count(*) FROM redemptions r JOIN payouts p ON p.redemption_id = r.redemption_id
                WHERE r.club_id = p_club_id),
    'events', (SELECT count(*) FROM events WHERE club_id = p_club_id),
    'endpoints', (SELECT count(*) FROM webhook_endpoints WHERE club_id = p_club_id),
    'deliveries', (SELECT count(*) FROM webhook_deliveries WHERE club_id = p_club_id),
    'attempts', (SELECT count(*) FROM webhook_attempts JOIN webhook_endpoints USING (endpoint_id)
                 WHERE club_id = p_club_id))
$$;

CREATE OR REPLACE FUNCTION mr_club_export(p_club_id bigint) RETURNS jsonb LANGUAGE sql STABLE
SET enable_seqscan = off SET jit = off AS $$
  SELECT jsonb_build_object(
    'club', (SELECT to_jsonb(c) FROM clubs c WHERE club_id = p_club_id),
    'stripes', (SELECT coalesce(jsonb_agg(to_jsonb(s)), '[]') FROM club_pool_stripes s WHERE club_id = p_club_id),
    'members', (SELECT coalesce(jsonb_agg(to_jsonb(m) ORDER BY member_id), '[]') FROM members m
                WHERE club_id = p_club_id),
    'wallets', (SELECT coalesce(jsonb_agg(to_jsonb(w)), '[]') FROM wallets w JOIN members m USING (member_id)
                WHERE m.club_id = p_club_id),
    'transactions', (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY tx_id), '[]') FROM transactions t
                     WHERE club_id = p_club_id),
    'reversals', (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY reversal_id), '[]')
                  FROM reversals r JOIN transactions t USING (tx_id) WHERE t.club_id = p_club_id),
    'entries', (SELECT coalesce(jsonb_agg(to_jsonb(e)), '[]')
                FROM members m JOIN ledger_entries e ON e.member_id = m.member_id WHERE m.club_id = p_club_id),
    'idempotency', (SELECT coalesce(jsonb_agg(to_jsonb(i)), '[]') FROM idempotency_records i
                    WHERE club_id = p_club_id),
    'redemptions', (SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') FROM redemptions r WHERE club_id = p_club_id),
    'payouts', (SELECT coalesce(jsonb_agg(to_jsonb(p)), '[]')
                FROM redemptions r JOIN payouts p ON p.redemption_id = r.redemption_id WHERE r.club_id = p_club_id),
    'events', (SELECT coalesce(jsonb_agg(to_jsonb(e) || jsonb_build_object(
                                 'cursor', mr_event_cursor(e.xid, e.event_no, e.created_at))
                               ORDER BY e.xid, e.event_no), '[]')
               FROM events e WHERE club_id = p_club_id),
    'aliases', (SELECT coalesce(jsonb_agg(to_jsonb(a)), '[]') FROM event_cursor_aliases a
                WHERE club_id = p_club_id),
    'endpoints', (SELECT coalesce(jsonb_agg(to_jsonb(w)), '[]') FROM webhook_endpoints w WHERE club_id = p_club_id),
    'deliveries', (SELECT coalesce(jsonb_agg(to_jsonb(d) ORDER BY delivery_id), '[]') FROM webhook_deliveries d
                   WHERE club_id = p_club_id),
    'attempts', (SELECT coalesce(jsonb_agg(to_jsonb(a)), '[]')
                 FROM webhook_attempts a JOIN webhook_endpoints w USING (endpoint_id) WHERE w.club_id = p_club_id))
$$;

CREATE OR REPLACE FUNCTION mr_club_has_books(p_club_id bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM members WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM idempotency_records WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM events WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM webhook_endpoints WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM redemptions WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM event_cursor_aliases WHERE club_id = p_club_id)
$$;

-- 020's removal, entries and payouts by the same paths.
CREATE OR REPLACE FUNCTION mr_club_purge(p_club_id bigint, p_keep_row boolean) RETURNS jsonb LANGUAGE plpgsql
SET enable_seqscan = off SET jit = off AS $$
DECLARE
  v_cols text[] := mr_club_book_columns();
  v_entries bigint;
BEGIN
  PERFORM 1 FROM clubs WHERE club_id = p_club_id AND moving FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'club % is not marked moving in this pod: nothing removed', p_club_id;
  END IF;
  PERFORM set_config('mr.purging_club', p_club_id::text, true);
  DELETE FROM event_cursor_aliases WHERE club_id = p_club_id;
  DELETE FROM webhook_attempts a USING webhook_endpoints w
  WHERE w.endpoint_id = a.endpoint_id AND w.club_id = p_club_id;
  DELETE FROM webhook_deliveries WHERE club_id = p_club_id;
  DELETE FROM events WHERE club_id = p_club_id;
  DELETE FROM webhook_endpoints WHERE club_id = p_club_id;
  DELETE FROM payouts p USING redemptions r WHERE p.redemption_id = r.redemption_id AND r.club_id = p_club_id;
  DELETE FROM redemptions WHERE club_id = p_club_id;
  DELETE FROM idempotency_records WHERE club_id = p_club_id;
  DELETE FROM reversals r USING transactions t WHERE t.tx_id = r.tx_id AND t.club_id = p_club_id;
  DELETE FROM ledger_entries e USING members m WHERE e.member_id = m.member_id AND m.club_id = p_club_id;
  GET DIAGNOSTICS v_entries = ROW_COUNT;
  DELETE FROM transactions WHERE club_id = p_club_id;
  DELETE FROM wallets w USING members m WHERE m.member_id = w.member_id AND m.club_id = p_club_id;
  DELETE FROM members WHERE club_id = p_club_id;
  PERFORM set_config('mr.purging_club', '', true);
  IF p_keep_row THEN
    UPDATE club_pool_stripes SET points = 0 WHERE club_id = p_club_id;
    EXECUTE format('UPDATE clubs c SET (%s) = (SELECT %s FROM jsonb_populate_record(c, $1) r) WHERE club_id = $2',
                   array_to_string(v_cols, ', '),
                   (SELECT string_agg('r.' || col, ', ' ORDER BY n) FROM unnest(v_cols) WITH ORDINALITY u(col, n)))
      USING '{"funded_points": 0, "burned_points": 0, "cash_capacity_minor": 0, "last_redemption_ms": 0}'::jsonb,
            p_club_id;
  ELSE
    DELETE FROM club_pool_stripes WHERE club_id = p_club_id;
    DELETE FROM clubs WHERE club_id = p_club_id;
  END IF;
  RETURN jsonb_build_object('entries', v_entries);
END $$;
