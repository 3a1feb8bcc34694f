-- The club move's removal from the pod it left: entries and payouts by the
-- same index paths as mr_club_summary reads them.
CREATE OR REPLACE FUNCTION mr_club_purge(p_club_id bigint, p_keep_row boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
 SET jit TO 'off'
AS $function$
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
END $function$;
