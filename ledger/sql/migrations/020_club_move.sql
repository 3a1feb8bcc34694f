-- Moving a club between pods (issue 29, item 3; `mrctl club move`,
-- tools/mrctl/cmd_club_move.cpp; docs/architecture.md, Pods).
--
-- The pause: clubs.moving on the club's row in the pod that keeps its books.
-- Every writer of a club's books checks it first and raises SQLSTATE MR503,
-- which the modules answer 503 service_unavailable with Retry-After; reads
-- go on. The check needs no lock: the mover commits the mark, then waits
-- until no session of the database holds a snapshot older than the mark
-- and every transaction running then has ended, so a writer either saw the
-- mark or has committed before the copy's snapshot is taken.
--
-- The copy: mr_club_export (the source, one REPEATABLE READ snapshot) and
-- mr_club_import (the target, one transaction). Internal bigint ids
-- (members, transactions, reversals, events, deliveries) come from each
-- database's own sequences and are given new ones in the target, in the
-- source's order, with every reference mapped: pods made before this
-- migration already share id ranges, so disjoint ranges could not help
-- them. Public ids (entries, redemptions, payouts, endpoints, event ids)
-- are random text and move as they are.
--
-- The events cursor (mr_events) is (xid, event_no) of the pod that wrote
-- the event. Moved events take the import's xid and new numbers in the
-- source's (xid, event_no) order, so they sort before anything the club
-- writes in the target later; event_cursor_aliases maps each cursor the
-- source handed out for them (the whole cursor text) to the moved event,
-- and mr_events decodes an alias before a cursor's digits. Aliases move
-- with the club, so a cursor stays good across any number of moves.

ALTER TABLE clubs ADD COLUMN moving boolean NOT NULL DEFAULT false;

CREATE TABLE event_cursor_aliases (
  club_id  bigint NOT NULL REFERENCES clubs,
  cursor   text NOT NULL,
  event_no bigint NOT NULL REFERENCES events ON DELETE CASCADE,
  PRIMARY KEY (club_id, cursor)
);
CREATE INDEX event_cursor_aliases_event ON event_cursor_aliases (event_no);
INSERT INTO api_access (object, privilege) VALUES ('event_cursor_aliases', 'select');

-- The pause, raised by every writer of a moving club's books.
CREATE FUNCTION mr_refuse_moving(p_club_id bigint) RETURNS void LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM clubs WHERE club_id = p_club_id AND moving) THEN
    RAISE EXCEPTION 'club % is moving to another pod: its writes resume shortly', p_club_id
      USING ERRCODE = 'MR503';
  END IF;
END $$;

CREATE FUNCTION mr_refuse_moving_ref(p_ref text) RETURNS void LANGUAGE sql STABLE AS $$
  SELECT mr_refuse_moving(club_id) FROM clubs WHERE partner_ref = p_ref
$$;

-- 014's mr_write, the pause first.
CREATE OR REPLACE FUNCTION mr_write(p_op text, p_club_id bigint, p_partner_ref text, p_idem_key text,
                                    p_fingerprint text, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_record idempotency_records%ROWTYPE;
  v_result jsonb;
BEGIN
  PERFORM mr_refuse_moving(p_club_id);
  PERFORM pg_advisory_xact_lock(hashtextextended(p_club_id::text || ':' || p_idem_key, 0));
  SELECT * INTO v_record FROM idempotency_records WHERE club_id = p_club_id AND idem_key = p_idem_key;
  IF FOUND THEN
    IF v_record.fingerprint <> p_fingerprint THEN
      RETURN mr_fail('duplicate_idempotency_conflict', p_request_id);
    END IF;
    RETURN v_record.result || '{"replayed": true}';
  END IF;
  IF p_cmd->>'partnerRef' IS DISTINCT FROM p_partner_ref THEN
    v_result := mr_fail('partner_not_found', p_request_id);
  ELSIF p_op = 'member' THEN
    v_result := mr_do_member(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'settle' THEN
    v_result := mr_do_settle(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'reverse' THEN
    v_result := mr_do_reverse(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'redeem' THEN
    v_result := mr_do_redeem(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'close' THEN
    v_result := mr_do_close(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'webhook_create' THEN
    v_result := mr_do_webhook_create(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'webhook_update' THEN
    v_result := mr_do_webhook_update(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'webhook_rotate' THEN
    v_result := mr_do_webhook_rotate(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'webhook_delete' THEN
    v_result := mr_do_webhook_delete(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'webhook_replay' THEN
    v_result := mr_do_webhook_replay(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'test_payout' THEN
    v_result := mr_do_test_payout(p_club_id, p_request_id, p_cmd);
  ELSE
    RAISE EXCEPTION 'unknown operation %', p_op;
  END IF;
  IF v_result->>'outcome' IN ('ok', 'created', 'updated', 'accepted') THEN
    PERFORM mr_emit_write(p_op, p_club_id, p_cmd, v_result);
  END IF;
  -- invalid_request is not kept: the client may fix the request and retry.
  IF v_result->>'outcome' <> 'invalid_request' THEN
    INSERT INTO idempotency_records (club_id, idem_key, fingerprint, result)
    VALUES (p_club_id, p_idem_key, p_fingerprint, v_result);
  END IF;
  RETURN v_result;
END $$;

-- A batch with a moving club's settle fails whole; the modules then run
-- its settles one by one (pg_pool.cpp), and only that club's are refused.
ALTER FUNCTION mr_write_batch(jsonb) RENAME TO mr_write_batch_unpaused;
CREATE FUNCTION mr_write_batch(p_batch jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mr_refuse_moving(c) FROM (SELECT DISTINCT (b.v->>1)::bigint AS c FROM jsonb_array_elements(p_batch) b(v)) x;
  RETURN QUERY SELECT * FROM mr_write_batch_unpaused(p_batch);
END $$;

ALTER FUNCTION mr_payout_move(text, text, text) RENAME TO mr_payout_move_unpaused;
CREATE FUNCTION mr_payout_move(p_payout text, p_to text, p_reason text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mr_refuse_moving(club_id) FROM payouts WHERE payout_id = p_payout;
  RETURN mr_payout_move_unpaused(p_payout, p_to, p_reason);
END $$;

ALTER FUNCTION mr_adjust(text, text, bigint, text) RENAME TO mr_adjust_unpaused;
CREATE FUNCTION mr_adjust(p_ref text, p_member text, p_points bigint, p_reason text) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mr_refuse_moving_ref(p_ref);
  RETURN mr_adjust_unpaused(p_ref, p_member, p_points, p_reason);
END $$;

ALTER FUNCTION mr_pool_topup(text, bigint) RENAME TO mr_pool_topup_unpaused;
CREATE FUNCTION mr_pool_topup(p_ref text, p_points bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mr_refuse_moving_ref(p_ref);
  RETURN mr_pool_topup_unpaused(p_ref, p_points);
END $$;

ALTER FUNCTION mr_capacity_topup(text, bigint) RENAME TO mr_capacity_topup_unpaused;
CREATE FUNCTION mr_capacity_topup(p_ref text, p_minor bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mr_refuse_moving_ref(p_ref);
  RETURN mr_capacity_topup_unpaused(p_ref, p_minor);
END $$;

ALTER FUNCTION mr_ops_webhook_status(text, text) RENAME TO mr_ops_webhook_status_unpaused;
CREATE FUNCTION mr_ops_webhook_status(p_endpoint_id text, p_status text) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mr_refuse_moving(club_id) FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id;
  RETURN mr_ops_webhook_status_unpaused(p_endpoint_id, p_status);
END $$;

ALTER FUNCTION mr_ops_webhook_replay(text, timestamptz) RENAME TO mr_ops_webhook_replay_unpaused;
CREATE FUNCTION mr_ops_webhook_replay(p_endpoint_id text, p_since timestamptz) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mr_refuse_moving(club_id) FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id;
  RETURN mr_ops_webhook_replay_unpaused(p_endpoint_id, p_since);
END $$;

-- 003's simulator, leaving a moving club's payouts to the target pod
-- (raising would stop every other club's payouts too).
CREATE OR REPLACE FUNCTION mr_payout_simulate(p_delay_ms bigint, p_batch int DEFAULT 50) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  n int := 0;
BEGIN
  FOR r IN SELECT payout_id, account_number FROM payouts p
           WHERE status IN ('created', 'submitted')
             AND created_at <= clock_timestamp() - p_delay_ms * interval '1 millisecond'
             AND NOT EXISTS (SELECT 1 FROM clubs c WHERE c.club_id = p.club_id AND c.moving)
           ORDER BY created_at LIMIT p_batch FOR UPDATE OF p SKIP LOCKED LOOP
    IF r.account_number = '00000000' THEN
      PERFORM mr_payout_move(r.payout_id, 'failed', 'simulated: the bank rejected account 00000000');
    ELSE
      PERFORM mr_payout_move(r.payout_id, 'succeeded');
    END IF;
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;

-- 014's claim, claiming nothing of a moving club: its deliveries go out
-- from the target pod once the club is there. (An attempt claimed before
-- the mark and reported after the copy is sent again from the target:
-- delivery is at least once.)
CREATE OR REPLACE FUNCTION mr_webhook_claim(p_environment text, p_limit int, p_lease_ms int)
RETURNS TABLE (delivery_id bigint, attempt int, endpoint_id text, url text, secrets_sealed text[],
               event_id text, body text)
LANGUAGE sql VOLATILE AS $$
  WITH due AS (
    SELECT d.delivery_id FROM webhook_deliveries d
    WHERE d.state = 'pending' AND d.next_at <= clock_timestamp()
      AND NOT EXISTS (SELECT 1 FROM clubs c WHERE c.club_id = d.club_id AND c.moving)
    ORDER BY d.next_at LIMIT p_limit
    FOR UPDATE OF d SKIP LOCKED
  ),
  claimed AS (
    UPDATE webhook_deliveries d
    SET attempts = d.attempts + 1, next_at = clock_timestamp() + p_lease_ms * interval '1 millisecond'
    FROM due WHERE d.delivery_id = due.delivery_id
    RETURNING d.delivery_id, d.attempts, d.endpoint_id, d.event_no
  )
  SELECT c.delivery_id, c.attempts, c.endpoint_id, w.url,
         CASE WHEN w.previous_expires_at > clock_timestamp()
              THEN ARRAY[w.secret_sealed, w.previous_secret_sealed] ELSE ARRAY[w.secret_sealed] END,
         e.event_id,
         jsonb_build_object('id', e.event_id, 'type', e.type, 'createdAt', mr_ts_text(e.created_at),
                            'environment', p_environment, 'data', e.data)::text
  FROM claimed c JOIN webhook_endpoints w ON w.endpoint_id = c.endpoint_id JOIN events e ON e.event_no = c.event_no
$$;

-- 014's events API, reading a cursor handed out by the pod the club came
-- from as the position of the moved event it names.
CREATE OR REPLACE FUNCTION mr_events(p_club_id bigint, p_environment text, p_after text, p_limit int,
                                     p_types text[], p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_xid xid8 := '0';
  v_no bigint := 0;
  v_page jsonb;
  v_next text;
BEGIN
  IF p_after IS NOT NULL THEN
    IF p_after !~ '^cur_[0-9a-f]{48}$' OR substr(p_after, 5, 1) > '7' THEN
      RETURN mr_invalid(p_request_id, 'Invalid cursor.', 'after', 'must be a nextAfter value of this API');
    END IF;
    IF mr_hex_bigint(substr(p_after, 37, 16)) < mr_now_ms() - 30 * 86400000::bigint THEN
      RETURN mr_invalid(p_request_id, 'The cursor is older than the 30 days events are kept.', 'after',
                        'is older than 30 days; page again without after');
    END IF;
    SELECT e.xid, e.event_no INTO v_xid, v_no
    FROM event_cursor_aliases a JOIN events e USING (event_no)
    WHERE a.club_id = p_club_id AND a.cursor = p_after;
    IF NOT FOUND THEN
      v_xid := mr_hex_bigint(substr(p_after, 5, 16))::text::xid8;
      v_no := mr_hex_bigint(substr(p_after, 21, 16));
    END IF;
  END IF;
  SELECT coalesce(jsonb_agg(jsonb_build_object(
           'id', e.event_id, 'type', e.type, 'createdAt', mr_ts_text(e.created_at),
           'environment', p_environment, 'data', e.data) ORDER BY e.xid, e.event_no), '[]'::jsonb),
         (array_agg(mr_event_cursor(e.xid, e.event_no, e.created_at) ORDER BY e.xid DESC, e.event_no DESC))[1]
  INTO v_page, v_next
  FROM (SELECT * FROM events e
        WHERE e.club_id = p_club_id AND (e.xid, e.event_no) > (v_xid, v_no)
          AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
          AND (p_types IS NULL OR e.type = ANY (p_types))
        ORDER BY e.xid, e.event_no LIMIT p_limit) e;
  RETURN mr_ok('ok', p_request_id, jsonb_build_object('entries', v_page, 'nextAfter', coalesce(v_next, p_after)));
END $$;

-- Entries stay append-only, except that mr_club_purge removes a moved
-- club's from the pod it left.
CREATE OR REPLACE FUNCTION mr_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('mr.purging_club', true) = OLD.club_id::text THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'ledger entries are append-only';
END $$;

-- What both pods must agree on after the copy (with mr_audit_club clean
-- on both): every table's rows of the club and the sums the audit checks.
CREATE FUNCTION mr_club_summary(p_club_id bigint) RETURNS jsonb LANGUAGE sql STABLE AS $$
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
    'entries', (SELECT jsonb_build_array(count(*), sum(delta_available), sum(delta_reserved))
                FROM ledger_entries WHERE club_id = p_club_id),
    'idempotency', (SELECT count(*) FROM idempotency_records WHERE club_id = p_club_id),
    'redemptions', (SELECT count(*) FROM redemptions WHERE club_id = p_club_id),
    'payouts', (SELECT count(*) FROM payouts WHERE club_id = p_club_id),
    'events', (SELECT count(*) FROM events WHERE club_id = p_club_id),
    'endpoints', (SELECT count(*) FROM webhook_endpoints WHERE club_id = p_club_id),
    'deliveries', (SELECT count(*) FROM webhook_deliveries WHERE club_id = p_club_id),
    'attempts', (SELECT count(*) FROM webhook_attempts JOIN webhook_endpoints USING (endpoint_id)
                 WHERE club_id = p_club_id))
$$;

-- Every row of the club's books, as JSON, in the order the import needs.
CREATE FUNCTION mr_club_export(p_club_id bigint) RETURNS jsonb LANGUAGE sql STABLE AS $$
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
    'entries', (SELECT coalesce(jsonb_agg(to_jsonb(e)), '[]') FROM ledger_entries e WHERE club_id = p_club_id),
    'idempotency', (SELECT coalesce(jsonb_agg(to_jsonb(i)), '[]') FROM idempotency_records i
                    WHERE club_id = p_club_id),
    'redemptions', (SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') FROM redemptions r WHERE club_id = p_club_id),
    'payouts', (SELECT coalesce(jsonb_agg(to_jsonb(p)), '[]') FROM payouts p WHERE club_id = p_club_id),
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

-- Whether this database holds any of the club's books (beyond its row and
-- empty stripes): a move's target must not.
CREATE FUNCTION mr_club_has_books(p_club_id bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM members WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM idempotency_records WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM events WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM webhook_endpoints WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM payouts WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM event_cursor_aliases WHERE club_id = p_club_id)
$$;

-- The clubs columns a pod keeps for itself (the rest is the catalogue's
-- routing): set from the source's row, or reset when the books leave.
CREATE FUNCTION mr_club_book_columns() RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT array_agg(quote_ident(attname::text) ORDER BY attnum) FROM pg_attribute
  WHERE attrelid = 'clubs'::regclass AND attnum > 0 AND NOT attisdropped
    AND attname NOT IN ('club_id', 'partner_ref', 'pod', 'moving', 'created_at')
$$;

-- The export of another pod into this one, in one transaction (the
-- caller's). The club's row: inserted, or (the catalogue's own row, when
-- this is the home pod) given the source's settings and totals; its
-- directory entry (pod) is the flip's to change.
CREATE FUNCTION mr_club_import(p jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
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
END $$;

-- The club's books removed from the pod it moved out of (mrctl club move
-- --finish, once every node routes to the new pod). The catalogue's own
-- row (p_keep_row: the home pod) stays as the directory's, with the
-- totals a club in another pod has there, and stays marked moving so a
-- node still routing here cannot write.
CREATE FUNCTION mr_club_purge(p_club_id bigint, p_keep_row boolean) RETURNS jsonb LANGUAGE plpgsql AS $$
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
  DELETE FROM payouts WHERE club_id = p_club_id;
  DELETE FROM redemptions WHERE club_id = p_club_id;
  DELETE FROM idempotency_records WHERE club_id = p_club_id;
  DELETE FROM reversals r USING transactions t WHERE t.tx_id = r.tx_id AND t.club_id = p_club_id;
  DELETE FROM ledger_entries WHERE club_id = p_club_id;
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
