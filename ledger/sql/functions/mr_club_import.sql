-- The export of another pod into this one, in one transaction (the
-- caller's). The club's row: inserted, or (the catalogue's own row, when
-- this is the home pod) given the source's settings and totals; its
-- directory entry (pod) is the flip's to change.
CREATE OR REPLACE FUNCTION mr_club_import(p jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_club bigint := (p->'club'->>'club_id')::bigint;
  v_cols text[] := mr_club_book_columns();
  v_members int;
  v_events int;
BEGIN
  IF mr_club_has_books(v_club) THEN
    RAISE EXCEPTION 'this pod already holds books of club % (an earlier move not finished?)', v_club;
  END IF;
  IF EXISTS (SELECT 1 FROM clubs WHERE club_id = v_club) THEN
    EXECUTE format('UPDATE clubs c SET (%s) = (SELECT %s FROM jsonb_populate_record(NULL::clubs, $1) r), '
                   'moving = false WHERE c.club_id = $2',
                   array_to_string(v_cols, ', '),
                   (SELECT string_agg('r.' || col, ', ' ORDER BY n) FROM unnest(v_cols) WITH ORDINALITY u(col, n)))
      USING p->'club', v_club;
  ELSE
    INSERT INTO clubs SELECT * FROM jsonb_populate_record(NULL::clubs, (p->'club') || '{"pod": null, "moving": false}');
  END IF;
  UPDATE club_pool_stripes s SET points = x.points
  FROM jsonb_populate_recordset(NULL::club_pool_stripes, p->'stripes') x
  WHERE s.club_id = v_club AND s.stripe = x.stripe;

  -- New ids in the source's order, drawn from this database's sequences.
  CREATE TEMP TABLE mr_move_ids (kind text, old_id bigint, new_id bigint, PRIMARY KEY (kind, old_id))
    ON COMMIT DROP;
  INSERT INTO mr_move_ids
  SELECT 'member', o, nextval(pg_get_serial_sequence('members', 'member_id'))
  FROM (SELECT (x->>'member_id')::bigint AS o FROM jsonb_array_elements(p->'members') x ORDER BY 1) s;
  INSERT INTO mr_move_ids
  SELECT 'tx', o, nextval(pg_get_serial_sequence('transactions', 'tx_id'))
  FROM (SELECT (x->>'tx_id')::bigint AS o FROM jsonb_array_elements(p->'transactions') x ORDER BY 1) s;
  INSERT INTO mr_move_ids
  SELECT 'reversal', o, nextval(pg_get_serial_sequence('reversals', 'reversal_id'))
  FROM (SELECT (x->>'reversal_id')::bigint AS o FROM jsonb_array_elements(p->'reversals') x ORDER BY 1) s;
  INSERT INTO mr_move_ids
  SELECT 'event', o, nextval(pg_get_serial_sequence('events', 'event_no'))
  FROM (SELECT (x->>'event_no')::bigint AS o, ord FROM jsonb_array_elements(p->'events') WITH ORDINALITY x(x, ord)
        ORDER BY ord) s;
  INSERT INTO mr_move_ids
  SELECT 'delivery', o, nextval(pg_get_serial_sequence('webhook_deliveries', 'delivery_id'))
  FROM (SELECT (x->>'delivery_id')::bigint AS o FROM jsonb_array_elements(p->'deliveries') x ORDER BY 1) s;

  INSERT INTO members
  SELECT r.* FROM jsonb_array_elements(p->'members') x
  JOIN mr_move_ids m ON m.kind = 'member' AND m.old_id = (x->>'member_id')::bigint
  CROSS JOIN LATERAL jsonb_populate_record(NULL::members, x || jsonb_build_object('member_id', m.new_id)) r;
  GET DIAGNOSTICS v_members = ROW_COUNT;
  INSERT INTO wallets
  SELECT r.* FROM jsonb_array_elements(p->'wallets') x
  JOIN mr_move_ids m ON m.kind = 'member' AND m.old_id = (x->>'member_id')::bigint
  CROSS JOIN LATERAL jsonb_populate_record(NULL::wallets, x || jsonb_build_object('member_id', m.new_id)) r;
  INSERT INTO transactions
  SELECT r.* FROM jsonb_array_elements(p->'transactions') x
  JOIN mr_move_ids m ON m.kind = 'member' AND m.old_id = (x->>'member_id')::bigint
  JOIN mr_move_ids t ON t.kind = 'tx' AND t.old_id = (x->>'tx_id')::bigint
  CROSS JOIN LATERAL jsonb_populate_record(NULL::transactions,
                                           x || jsonb_build_object('member_id', m.new_id, 'tx_id', t.new_id)) r;
  INSERT INTO reversals
  SELECT r.* FROM jsonb_array_elements(p->'reversals') x
  JOIN mr_move_ids m ON m.kind = 'member' AND m.old_id = (x->>'member_id')::bigint
  JOIN mr_move_ids t ON t.kind = 'tx' AND t.old_id = (x->>'tx_id')::bigint
  JOIN mr_move_ids v ON v.kind = 'reversal' AND v.old_id = (x->>'reversal_id')::bigint
  CROSS JOIN LATERAL jsonb_populate_record(NULL::reversals, x || jsonb_build_object(
    'member_id', m.new_id, 'tx_id', t.new_id, 'reversal_id', v.new_id)) r;
  INSERT INTO ledger_entries
  SELECT r.* FROM jsonb_array_elements(p->'entries') x
  JOIN mr_move_ids m ON m.kind = 'member' AND m.old_id = (x->>'member_id')::bigint
  CROSS JOIN LATERAL jsonb_populate_record(NULL::ledger_entries, x || jsonb_build_object('member_id', m.new_id)) r;
  INSERT INTO idempotency_records
  SELECT r.* FROM jsonb_populate_recordset(NULL::idempotency_records, p->'idempotency') r;
  INSERT INTO redemptions
  SELECT r.* FROM jsonb_array_elements(p->'redemptions') x
  JOIN mr_move_ids m ON m.kind = 'member' AND m.old_id = (x->>'member_id')::bigint
  CROSS JOIN LATERAL jsonb_populate_record(NULL::redemptions, x || jsonb_build_object('member_id', m.new_id)) r;
  INSERT INTO payouts SELECT r.* FROM jsonb_populate_recordset(NULL::payouts, p->'payouts') r;

  -- Events: this transaction's xid (the column's default), numbers in the
  -- source's order.
  INSERT INTO events OVERRIDING SYSTEM VALUE
  SELECT r.* FROM jsonb_array_elements(p->'events') x
  JOIN mr_move_ids e ON e.kind = 'event' AND e.old_id = (x->>'event_no')::bigint
  CROSS JOIN LATERAL jsonb_populate_record(NULL::events, (x - 'cursor') || jsonb_build_object(
    'event_no', e.new_id, 'xid', pg_current_xact_id()::text)) r
  ORDER BY e.new_id;
  GET DIAGNOSTICS v_events = ROW_COUNT;
  INSERT INTO event_cursor_aliases (club_id, cursor, event_no)
  SELECT v_club, x->>'cursor', e.new_id FROM jsonb_array_elements(p->'events') x
  JOIN mr_move_ids e ON e.kind = 'event' AND e.old_id = (x->>'event_no')::bigint
  UNION ALL
  SELECT v_club, x->>'cursor', e.new_id FROM jsonb_array_elements(p->'aliases') x
  JOIN mr_move_ids e ON e.kind = 'event' AND e.old_id = (x->>'event_no')::bigint
  ON CONFLICT DO NOTHING;

  INSERT INTO webhook_endpoints SELECT r.* FROM jsonb_populate_recordset(NULL::webhook_endpoints, p->'endpoints') r;
  INSERT INTO webhook_deliveries OVERRIDING SYSTEM VALUE
  SELECT r.* FROM jsonb_array_elements(p->'deliveries') x
  JOIN mr_move_ids d ON d.kind = 'delivery' AND d.old_id = (x->>'delivery_id')::bigint
  JOIN mr_move_ids e ON e.kind = 'event' AND e.old_id = (x->>'event_no')::bigint
  CROSS JOIN LATERAL jsonb_populate_record(NULL::webhook_deliveries, x || jsonb_build_object(
    'delivery_id', d.new_id, 'event_no', e.new_id)) r;
  INSERT INTO webhook_attempts
  SELECT r.* FROM jsonb_array_elements(p->'attempts') x
  JOIN mr_move_ids e ON e.kind = 'event' AND e.old_id = (x->>'event_no')::bigint
  CROSS JOIN LATERAL jsonb_populate_record(NULL::webhook_attempts, x || jsonb_build_object('event_no', e.new_id)) r;
  DROP TABLE mr_move_ids;
  IF EXISTS (SELECT 1 FROM webhook_deliveries WHERE club_id = v_club AND state = 'pending') THEN
    PERFORM pg_notify('mr_webhooks', '');
  END IF;
  RETURN jsonb_build_object('members', v_members, 'events', v_events);
END $function$;
