-- Events and webhooks (contract section 10; docs/events-design.md).
--
-- An outbox: every committed change writes its event in its own
-- transaction, through mr_emit() alone. The writers that emit:
--   mr_write        restated at the end (after what it calls): events after
--                   the operation, none on a replay; also the webhook
--                   endpoint ops and the sandbox test helper, with the same
--                   idempotency.
--   mr_write_batch  013's function renamed mr_write_batch_decide and
--                   wrapped: one event per awarded settle, set-based.
--   mr_payout_move  003's function renamed mr_payout_move_decide and
--                   wrapped: redemption.completed / .failed when the payout
--                   really moved (the ops listener, mrctl, the simulator and
--                   the test helper all call it).
--   mr_adjust       002's function renamed mr_adjust_decide and wrapped.

-- memberSequence: the member row every change already holds locked.
ALTER TABLE members ADD COLUMN event_seq bigint NOT NULL DEFAULT 0;

CREATE TABLE events (
  event_no   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id   text NOT NULL UNIQUE,
  club_id    bigint NOT NULL REFERENCES clubs,
  -- The writing transaction: the events API lists only events whose
  -- transaction is older than every one still running (see mr_events).
  xid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
  type       text NOT NULL,
  data       jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX events_cursor ON events (club_id, xid, event_no);
CREATE INDEX events_age ON events (created_at);

CREATE TABLE webhook_endpoints (
  endpoint_id            text PRIMARY KEY,
  club_id                bigint NOT NULL REFERENCES clubs,
  url                    text NOT NULL,
  event_types            text[] NOT NULL DEFAULT '{}',  -- empty: every type
  description            text,
  status                 text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled', 'deleted')),
  disabled_reason        text CHECK (disabled_reason IN ('gone', 'failing', 'manual')),
  -- Secrets sealed by the modules under the master key (keys/webhook_secret):
  -- the database never sees one in clear.
  secret_sealed          text NOT NULL,
  previous_secret_sealed text,       -- signs beside the new one until
  previous_expires_at    timestamptz,  -- 24 h after a rotation
  failing_since          timestamptz,  -- first failed attempt since the last success
  last_attempt_ms        bigint NOT NULL DEFAULT 0,  -- attempts' strictly increasing times
  created_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at             timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_endpoints_enabled ON webhook_endpoints (club_id) WHERE status = 'enabled';

-- The queue: one row per event and endpoint (a replay adds another).
-- pending: to send at next_at; paused: its endpoint is disabled (re-enabling
-- makes it pending again); delivered, exhausted, cancelled (endpoint deleted).
CREATE TABLE webhook_deliveries (
  delivery_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints,
  club_id     bigint NOT NULL,
  event_no    bigint NOT NULL REFERENCES events ON DELETE CASCADE,
  state       text NOT NULL DEFAULT 'pending'
              CHECK (state IN ('pending', 'paused', 'delivered', 'exhausted', 'cancelled')),
  attempts    int NOT NULL DEFAULT 0,  -- claims so far: the claimed attempt's number
  next_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, event_no)
  WHERE state IN ('pending', 'paused');

CREATE TABLE webhook_attempts (
  endpoint_id  text NOT NULL REFERENCES webhook_endpoints,
  attempted_ms bigint NOT NULL,  -- strictly increasing per endpoint: `before` pages exactly
  event_no     bigint NOT NULL REFERENCES events ON DELETE CASCADE,
  attempt      int NOT NULL,
  status       int,   -- the HTTP status, or NULL when none came back
  error        text,  -- why, when it failed
  duration_ms  int NOT NULL,
  PRIMARY KEY (endpoint_id, attempted_ms)
);

CREATE FUNCTION mr_now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $$
  SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
$$;

-- Every event goes through here: the member's next sequence number, the
-- event row, a delivery for each of the club's enabled endpoints that wants
-- its type, and a wake-up for the workers only when one was queued.
CREATE FUNCTION mr_emit(p_club_id bigint, p_member_id bigint, p_type text, p_data jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint;
  v_external text;
  v_no bigint;
BEGIN
  UPDATE members SET event_seq = event_seq + 1 WHERE member_id = p_member_id
  RETURNING event_seq, external_id INTO v_seq, v_external;
  INSERT INTO events (event_id, club_id, type, data)
  VALUES (mr_new_id('evt_'), p_club_id, p_type,
          p_data || jsonb_build_object('externalMemberId', v_external, 'memberSequence', v_seq))
  RETURNING event_no INTO v_no;
  INSERT INTO webhook_deliveries (endpoint_id, club_id, event_no, next_at)
  SELECT w.endpoint_id, p_club_id, v_no, now() FROM webhook_endpoints w
  WHERE w.club_id = p_club_id AND w.status = 'enabled' AND (w.event_types = '{}' OR p_type = ANY (w.event_types));
  IF FOUND THEN PERFORM pg_notify('mr_webhooks', ''); END IF;
END $$;

-- Settles sent together: 013's decisions, then the events of the awarded
-- ones in one statement. A member with several settles in the batch gets
-- consecutive sequence numbers in the batch's order, which is the order
-- their entries were written in.
ALTER FUNCTION mr_write_batch(jsonb) RENAME TO mr_write_batch_decide;
CREATE FUNCTION mr_write_batch(p_batch jsonb) RETURNS SETOF jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_results jsonb[];
  v_queued int;
BEGIN
  SELECT array_agg(r ORDER BY ord) INTO v_results FROM mr_write_batch_decide(p_batch) WITH ORDINALITY t(r, ord);
  WITH awarded AS (
    SELECT o.ord, (b.v->>1)::bigint AS club_id, m.member_id, o.res->'data' AS data
    FROM unnest(v_results) WITH ORDINALITY o(res, ord)
    JOIN jsonb_array_elements(p_batch) WITH ORDINALITY b(v, ord) ON b.ord = o.ord
    CROSS JOIN LATERAL (SELECT member_id FROM members
                        WHERE club_id = (b.v->>1)::bigint AND external_id = b.v->6->>'externalMemberId'
                        LIMIT 1) m
    WHERE o.res->>'outcome' = 'ok' AND NOT o.res ? 'replayed'
  ),
  counted AS (
    SELECT member_id, count(*) AS n FROM awarded GROUP BY member_id
  ),
  sequenced AS (
    UPDATE members m SET event_seq = m.event_seq + c.n FROM counted c WHERE m.member_id = c.member_id
    RETURNING m.member_id, m.event_seq - c.n AS base, m.external_id
  ),
  written AS (
    INSERT INTO events (event_id, club_id, type, data)
    SELECT mr_new_id('evt_'), a.club_id, 'transaction.settled', jsonb_build_object(
             'eventId', a.data->'eventId', 'externalTransactionId', a.data->'externalTransactionId',
             'pointsAwarded', a.data->'pointsAwarded', 'balances', a.data->'balances',
             'ledgerGroupId', a.data->'ledgerGroupId', 'externalMemberId', s.external_id,
             'memberSequence', s.base + row_number() OVER (PARTITION BY a.member_id ORDER BY a.ord))
    FROM awarded a JOIN sequenced s USING (member_id)
    ORDER BY a.ord
    RETURNING event_no, club_id
  ),
  queued AS (
    INSERT INTO webhook_deliveries (endpoint_id, club_id, event_no, next_at)
    SELECT w.endpoint_id, e.club_id, e.event_no, now() FROM written e
    JOIN webhook_endpoints w ON w.club_id = e.club_id AND w.status = 'enabled'
                            AND (w.event_types = '{}' OR 'transaction.settled' = ANY (w.event_types))
    RETURNING 1
  )
  SELECT count(*) INTO v_queued FROM queued;
  IF v_queued > 0 THEN PERFORM pg_notify('mr_webhooks', ''); END IF;
  RETURN QUERY SELECT unnest(v_results);
END $$;

-- A payout that really moved to succeeded or failed is the redemption's
-- event; a repeated report of the same result moves nothing and emits
-- nothing. The payout row is locked first, as the decision locks it.
ALTER FUNCTION mr_payout_move(text, text, text) RENAME TO mr_payout_move_decide;
CREATE FUNCTION mr_payout_move(p_payout text, p_to text, p_reason text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_before text;
  v_result jsonb;
  v_red redemptions%ROWTYPE;
BEGIN
  SELECT status INTO v_before FROM payouts WHERE payout_id = p_payout FOR UPDATE;
  v_result := mr_payout_move_decide(p_payout, p_to, p_reason);
  IF v_before IS DISTINCT FROM p_to AND p_to IN ('succeeded', 'failed') THEN
    SELECT r.* INTO v_red FROM redemptions r JOIN payouts p USING (redemption_id) WHERE p.payout_id = p_payout;
    PERFORM mr_emit(v_red.club_id, v_red.member_id,
                    CASE p_to WHEN 'succeeded' THEN 'redemption.completed' ELSE 'redemption.failed' END,
                    v_result || jsonb_build_object('balances', mr_balances(v_red.member_id)));
  END IF;
  RETURN v_result;
END $$;

ALTER FUNCTION mr_adjust(text, text, bigint, text) RENAME TO mr_adjust_decide;
CREATE FUNCTION mr_adjust(p_ref text, p_member text, p_points bigint, p_reason text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_result jsonb;
  v_member members%ROWTYPE;
BEGIN
  v_result := mr_adjust_decide(p_ref, p_member, p_points, p_reason);
  SELECT m.* INTO v_member FROM members m JOIN clubs c USING (club_id)
  WHERE c.partner_ref = p_ref AND m.external_id = p_member;
  PERFORM mr_emit(v_member.club_id, v_member.member_id, 'points.adjusted', jsonb_build_object(
    'pointsDelta', p_points, 'reason', p_reason, 'balances', v_result->'balances'));
  RETURN v_result;
END $$;

-- POST /api/v1/test-helpers/redemptions/{id}/payout (sandbox): the move an
-- operator's report makes, with its conflicts.
CREATE FUNCTION mr_do_test_payout(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_payout payouts%ROWTYPE;
BEGIN
  SELECT p.* INTO v_payout FROM redemptions r JOIN payouts p USING (redemption_id)
  WHERE r.club_id = p_club_id AND r.redemption_id = p_cmd->>'redemptionId' FOR UPDATE OF p;
  IF v_payout.payout_id IS NULL THEN RETURN mr_fail('redemption_not_found', p_request_id); END IF;
  IF v_payout.status IN ('succeeded', 'failed') AND v_payout.status <> p_cmd->>'outcome' THEN
    RETURN mr_fail('payout_state_conflict', p_request_id,
                   'The payout already ' || v_payout.status || '; it cannot become ' || (p_cmd->>'outcome') || '.');
  END IF;
  RETURN mr_ok('ok', p_request_id,
               mr_payout_move(v_payout.payout_id, p_cmd->>'outcome', p_cmd->>'failureReason'));
END $$;

-- The events API: the club's events oldest first, after a cursor.
--
-- Ordered by (xid, event_no). A page shows only events whose transaction is
-- older than the reading snapshot's xmin: every such transaction has ended,
-- so no event can later appear below a cursor already handed out, and every
-- transaction still running has an xid at or above xmin, so its events come
-- after. A plain event_no cursor would skip an event whose transaction drew
-- its number first and committed after a later number was listed.
--
-- The cursor: cur_ + 16 hex digits each of the xid, the event number and
-- the event's creation time in ms (refuses cursors past the 30 days kept).
CREATE FUNCTION mr_event_cursor(p_xid xid8, p_no bigint, p_created timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT 'cur_' || lpad(to_hex(p_xid::text::bigint), 16, '0') || lpad(to_hex(p_no), 16, '0')
         || lpad(to_hex((extract(epoch FROM p_created) * 1000)::bigint), 16, '0')
$$;

CREATE FUNCTION mr_hex_bigint(p_hex text) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT ('x' || p_hex)::bit(64)::bigint
$$;

CREATE FUNCTION mr_invalid(p_request_id text, p_message text, p_field text, p_problem text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('outcome', 'invalid_request', 'requestId', p_request_id, 'message', p_message,
                            'details', jsonb_build_array(jsonb_build_object('field', p_field, 'problem', p_problem)))
$$;

CREATE FUNCTION mr_events(p_club_id bigint, p_environment text, p_after text, p_limit int, p_types text[],
                          p_request_id text) RETURNS jsonb
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
    v_xid := mr_hex_bigint(substr(p_after, 5, 16))::text::xid8;
    v_no := mr_hex_bigint(substr(p_after, 21, 16));
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

-- Webhook endpoints (partner API). The object as every answer shows it.
CREATE FUNCTION mr_webhook_endpoint_json(w webhook_endpoints) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('endpointId', w.endpoint_id, 'url', w.url, 'eventTypes', to_jsonb(w.event_types),
                            'description', w.description, 'status', w.status,
                            'disabledReason', w.disabled_reason, 'createdAt', mr_ts_text(w.created_at),
                            'updatedAt', mr_ts_text(w.updated_at))
$$;

-- A live endpoint of the club, locked: NULL when unknown, deleted or another club's.
CREATE FUNCTION mr_webhook_endpoint_row(p_club_id bigint, p_endpoint_id text) RETURNS webhook_endpoints
LANGUAGE sql VOLATILE AS $$
  SELECT * FROM webhook_endpoints
  WHERE endpoint_id = p_endpoint_id AND club_id = p_club_id AND status <> 'deleted' FOR UPDATE
$$;

CREATE FUNCTION mr_text_array(p jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg(DISTINCT t ORDER BY t), '{}') FROM jsonb_array_elements_text(coalesce(p, '[]')) t
$$;

CREATE FUNCTION mr_do_webhook_create(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  -- The club row serialises creations, so the limit holds under concurrency.
  PERFORM 1 FROM clubs WHERE club_id = p_club_id FOR UPDATE;
  IF (SELECT count(*) FROM webhook_endpoints WHERE club_id = p_club_id AND status <> 'deleted') >= 16 THEN
    RETURN mr_invalid(p_request_id, 'A club has at most 16 webhook endpoints; delete one first.', 'url',
                      'would be the 17th endpoint of the club');
  END IF;
  INSERT INTO webhook_endpoints (endpoint_id, club_id, url, event_types, description, secret_sealed)
  VALUES (p_cmd->>'endpointId', p_club_id, p_cmd->>'url', mr_text_array(p_cmd->'eventTypes'),
          p_cmd->>'description', p_cmd->>'secretSealed')
  RETURNING * INTO v_row;
  RETURN mr_ok('created', p_request_id,
               mr_webhook_endpoint_json(v_row) || jsonb_build_object('secretSealed', v_row.secret_sealed));
END $$;

-- Delivery of an endpoint's queue stops while it is disabled and resumes
-- when it is enabled again.
CREATE FUNCTION mr_webhook_set_status(p_endpoint_id text, p_status text, p_reason text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE webhook_endpoints
  SET status = p_status, disabled_reason = CASE WHEN p_status = 'disabled' THEN p_reason END,
      failing_since = CASE WHEN p_status = 'enabled' THEN NULL ELSE failing_since END,
      updated_at = clock_timestamp()
  WHERE endpoint_id = p_endpoint_id;
  IF p_status = 'enabled' THEN
    UPDATE webhook_deliveries SET state = 'pending', next_at = now()
    WHERE endpoint_id = p_endpoint_id AND state = 'paused';
    IF FOUND THEN PERFORM pg_notify('mr_webhooks', ''); END IF;
  ELSE
    UPDATE webhook_deliveries SET state = CASE WHEN p_status = 'deleted' THEN 'cancelled' ELSE 'paused' END
    WHERE endpoint_id = p_endpoint_id AND state IN ('pending', 'paused');
  END IF;
END $$;

CREATE FUNCTION mr_do_webhook_update(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  v_row := mr_webhook_endpoint_row(p_club_id, p_cmd->>'endpointId');
  IF v_row.endpoint_id IS NULL THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  UPDATE webhook_endpoints
  SET url = coalesce(p_cmd->>'url', url),
      event_types = CASE WHEN p_cmd ? 'eventTypes' THEN mr_text_array(p_cmd->'eventTypes') ELSE event_types END,
      description = CASE WHEN p_cmd ? 'description' THEN p_cmd->>'description' ELSE description END,
      updated_at = clock_timestamp()
  WHERE endpoint_id = v_row.endpoint_id;
  IF p_cmd->>'status' IS DISTINCT FROM NULL AND p_cmd->>'status' <> v_row.status THEN
    PERFORM mr_webhook_set_status(v_row.endpoint_id, p_cmd->>'status', 'manual');
  END IF;
  SELECT * INTO v_row FROM webhook_endpoints WHERE endpoint_id = v_row.endpoint_id;
  RETURN mr_ok('ok', p_request_id, mr_webhook_endpoint_json(v_row));
END $$;

CREATE FUNCTION mr_do_webhook_rotate(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  v_row := mr_webhook_endpoint_row(p_club_id, p_cmd->>'endpointId');
  IF v_row.endpoint_id IS NULL THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  UPDATE webhook_endpoints
  SET previous_secret_sealed = secret_sealed, previous_expires_at = clock_timestamp() + interval '24 hours',
      secret_sealed = p_cmd->>'secretSealed', updated_at = clock_timestamp()
  WHERE endpoint_id = v_row.endpoint_id RETURNING * INTO v_row;
  RETURN mr_ok('ok', p_request_id,
               mr_webhook_endpoint_json(v_row) || jsonb_build_object('secretSealed', v_row.secret_sealed));
END $$;

CREATE FUNCTION mr_do_webhook_delete(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  v_row := mr_webhook_endpoint_row(p_club_id, p_cmd->>'endpointId');
  IF v_row.endpoint_id IS NULL THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  PERFORM mr_webhook_set_status(v_row.endpoint_id, 'deleted', NULL);
  RETURN mr_ok('ok', p_request_id, jsonb_build_object('endpointId', v_row.endpoint_id, 'deleted', true));
END $$;

-- Every kept event since p_since that the endpoint wants, queued again
-- (once: an event still queued for it is not queued twice).
CREATE FUNCTION mr_webhook_replay(p_endpoint_id text, p_since timestamptz) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
  v_matched bigint;
BEGIN
  SELECT * INTO v_row FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id;
  WITH matching AS (
    SELECT e.event_no FROM events e
    WHERE e.club_id = v_row.club_id AND e.created_at >= p_since
      AND (v_row.event_types = '{}' OR e.type = ANY (v_row.event_types))
  ),
  queued AS (
    INSERT INTO webhook_deliveries (endpoint_id, club_id, event_no, next_at, state)
    SELECT v_row.endpoint_id, v_row.club_id, m.event_no, now(),
           CASE WHEN v_row.status = 'enabled' THEN 'pending' ELSE 'paused' END
    FROM matching m
    WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                      WHERE d.endpoint_id = v_row.endpoint_id AND d.event_no = m.event_no
                        AND d.state IN ('pending', 'paused'))
    RETURNING 1
  )
  -- queued runs whether or not it is read (a data-modifying WITH always does).
  SELECT count(*) INTO v_matched FROM matching;
  IF v_row.status = 'enabled' AND v_matched > 0 THEN PERFORM pg_notify('mr_webhooks', ''); END IF;
  RETURN v_matched;
END $$;

CREATE FUNCTION mr_do_webhook_replay(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  v_row := mr_webhook_endpoint_row(p_club_id, p_cmd->>'endpointId');
  IF v_row.endpoint_id IS NULL THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  RETURN mr_ok('ok', p_request_id, jsonb_build_object(
    'endpointId', v_row.endpoint_id,
    'replayed', mr_webhook_replay(v_row.endpoint_id, (p_cmd->>'since')::timestamptz)));
END $$;

CREATE FUNCTION mr_webhook_endpoints(p_club_id bigint, p_request_id text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT mr_ok('ok', p_request_id, jsonb_build_object('entries', coalesce(
    (SELECT jsonb_agg(mr_webhook_endpoint_json(w) ORDER BY w.created_at, w.endpoint_id)
     FROM webhook_endpoints w WHERE w.club_id = p_club_id AND w.status <> 'deleted'), '[]'::jsonb)))
$$;

CREATE FUNCTION mr_webhook_endpoint(p_club_id bigint, p_endpoint_id text, p_request_id text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT coalesce(
    (SELECT mr_ok('ok', p_request_id, mr_webhook_endpoint_json(w)) FROM webhook_endpoints w
     WHERE w.endpoint_id = p_endpoint_id AND w.club_id = p_club_id AND w.status <> 'deleted'),
    mr_fail('webhook_endpoint_not_found', p_request_id))
$$;

-- GET .../deliveries: attempts newest first, paged as histories (mr_page:
-- limit + 1 rows read, nextBefore the last shown one's attemptedAt in ms).
CREATE FUNCTION mr_webhook_deliveries(p_club_id bigint, p_endpoint_id text, p_limit int, p_before bigint,
                                      p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_rows jsonb;
  v_ms bigint[];
BEGIN
  PERFORM 1 FROM webhook_endpoints
  WHERE endpoint_id = p_endpoint_id AND club_id = p_club_id AND status <> 'deleted';
  IF NOT FOUND THEN RETURN mr_fail('webhook_endpoint_not_found', p_request_id); END IF;
  SELECT coalesce(jsonb_agg(jsonb_build_object(
           'eventId', e.event_id, 'attempt', a.attempt, 'status', a.status, 'error', a.error,
           'durationMs', a.duration_ms, 'attemptedAt', mr_ms_text(a.attempted_ms))
           ORDER BY a.attempted_ms DESC), '[]'::jsonb),
         array_agg(a.attempted_ms ORDER BY a.attempted_ms DESC)
  INTO v_rows, v_ms
  FROM (SELECT * FROM webhook_attempts
        WHERE endpoint_id = p_endpoint_id AND attempted_ms < mr_cursor_key(p_before)
        ORDER BY attempted_ms DESC LIMIT p_limit + 1) a
  JOIN events e USING (event_no);
  RETURN mr_page(v_rows, v_ms, p_limit, p_request_id);
END $$;

-- Delivery (docs/events-design.md). A claim takes due deliveries no other
-- session holds and pushes them past the lease before it commits, so
-- several workers and nginx nodes never send one attempt at once; a worker
-- that dies mid-attempt leaves it to be claimed again after the lease.
CREATE FUNCTION mr_webhook_claim(p_environment text, p_limit int, p_lease_ms int)
RETURNS TABLE (delivery_id bigint, attempt int, endpoint_id text, url text, secrets_sealed text[],
               event_id text, body text)
LANGUAGE sql VOLATILE AS $$
  WITH due AS (
    SELECT d.delivery_id FROM webhook_deliveries d
    WHERE d.state = 'pending' AND d.next_at <= clock_timestamp()
    ORDER BY d.next_at LIMIT p_limit
    FOR UPDATE SKIP LOCKED
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

-- What an attempt came to. p_schedule_ms[k] is the wait before attempt k
-- (the first is 0); Retry-After wins when it asks for longer.
CREATE FUNCTION mr_webhook_report(p_delivery_id bigint, p_attempt int, p_status int, p_error text,
                                  p_duration_ms int, p_retry_after_s int, p_schedule_ms int[]) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_d webhook_deliveries%ROWTYPE;
  v_w webhook_endpoints%ROWTYPE;
  v_ms bigint;
BEGIN
  -- The endpoint first, then the delivery: the order every writer of both
  -- takes (an endpoint's delete, disable or replay locks it, then its
  -- deliveries), so a report and a delete cannot deadlock.
  SELECT * INTO v_w FROM webhook_endpoints
  WHERE endpoint_id = (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.delivery_id = p_delivery_id)
  FOR UPDATE;
  IF NOT FOUND THEN RETURN 'stale'; END IF;
  SELECT * INTO v_d FROM webhook_deliveries WHERE delivery_id = p_delivery_id FOR UPDATE;
  v_ms := greatest(mr_now_ms(), v_w.last_attempt_ms + 1);
  UPDATE webhook_endpoints SET last_attempt_ms = v_ms WHERE endpoint_id = v_w.endpoint_id;
  INSERT INTO webhook_attempts (endpoint_id, attempted_ms, event_no, attempt, status, error, duration_ms)
  VALUES (v_w.endpoint_id, v_ms, v_d.event_no, p_attempt, p_status, p_error, greatest(p_duration_ms, 0));
  -- Reclaimed after its lease ran out (or the endpoint was disabled,
  -- deleted, the delivery replaced): the attempt is on record, its
  -- outcome decides nothing.
  IF v_d.state <> 'pending' OR v_d.attempts <> p_attempt THEN RETURN 'stale'; END IF;
  IF p_status BETWEEN 200 AND 299 THEN
    UPDATE webhook_deliveries SET state = 'delivered', next_at = NULL WHERE delivery_id = p_delivery_id;
    UPDATE webhook_endpoints SET failing_since = NULL WHERE endpoint_id = v_w.endpoint_id;
    RETURN 'delivered';
  END IF;
  IF p_attempt >= coalesce(array_length(p_schedule_ms, 1), 1) THEN
    UPDATE webhook_deliveries SET state = 'exhausted', next_at = NULL WHERE delivery_id = p_delivery_id;
  ELSE
    UPDATE webhook_deliveries
    SET next_at = clock_timestamp()
                  + greatest(p_schedule_ms[p_attempt + 1]::bigint, coalesce(p_retry_after_s, 0) * 1000::bigint)
                    * interval '1 millisecond'
    WHERE delivery_id = p_delivery_id;
  END IF;
  IF p_status = 410 THEN
    PERFORM mr_webhook_set_status(v_w.endpoint_id, 'disabled', 'gone');
    RETURN 'gone';
  END IF;
  UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, clock_timestamp())
  WHERE endpoint_id = v_w.endpoint_id RETURNING * INTO v_w;
  IF v_w.failing_since <= clock_timestamp() - interval '5 days' THEN
    PERFORM mr_webhook_set_status(v_w.endpoint_id, 'disabled', 'failing');
    RETURN 'failing';
  END IF;
  RETURN CASE WHEN p_attempt >= coalesce(array_length(p_schedule_ms, 1), 1) THEN 'exhausted' ELSE 'retry' END;
END $$;

-- The attempts a worker finished in one pass of its event loop, reported in
-- one transaction: one commit, and each endpoint row locked once for all of
-- them rather than once per attempt (every report of an endpoint serialises
-- on that row). p_reports: [{"d": delivery, "a": attempt, "s": status,
-- "e": error, "ms": duration, "ra": Retry-After s}, ...]; each outcome is
-- the one mr_webhook_report would give. Endpoints are locked first, in
-- endpoint_id order, then the deliveries in delivery_id order: two workers'
-- batches, and a batch and an endpoint's delete, take them in one order.
-- The steady state, every attempt answered 2xx, is set-based; a batch with
-- a failure goes through mr_webhook_report one attempt at a time, in
-- (endpoint, delivery) order.
CREATE FUNCTION mr_webhook_report_batch(p_reports jsonb, p_schedule_ms int[])
RETURNS TABLE (delivery_id bigint, attempt int, next text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  r record;
  v_ids bigint[];
  v_now bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p_reports) x
             WHERE (x->>'s')::int IS NULL OR (x->>'s')::int NOT BETWEEN 200 AND 299) THEN
    FOR r IN
      SELECT (x->>'d')::bigint AS d, (x->>'a')::int AS a, (x->>'s')::int AS s, x->>'e' AS e,
             (x->>'ms')::int AS ms, (x->>'ra')::int AS ra
      FROM jsonb_array_elements(p_reports) x
      LEFT JOIN webhook_deliveries w ON w.delivery_id = (x->>'d')::bigint
      ORDER BY w.endpoint_id, (x->>'d')::bigint
    LOOP
      delivery_id := r.d;
      attempt := r.a;
      next := mr_webhook_report(r.d, r.a, r.s, r.e, r.ms, r.ra, p_schedule_ms);
      RETURN NEXT;
    END LOOP;
    RETURN;
  END IF;
  SELECT array_agg((x->>'d')::bigint) INTO v_ids FROM jsonb_array_elements(p_reports) x;
  PERFORM 1 FROM webhook_endpoints w
  WHERE w.endpoint_id IN (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.delivery_id = ANY (v_ids))
  ORDER BY w.endpoint_id FOR UPDATE;
  PERFORM 1 FROM webhook_deliveries d WHERE d.delivery_id = ANY (v_ids) ORDER BY d.delivery_id FOR UPDATE;
  v_now := mr_now_ms();
  RETURN QUERY
  WITH rep AS (
    SELECT (x->>'d')::bigint AS d, (x->>'a')::int AS a, (x->>'s')::int AS s, (x->>'ms')::int AS ms, t.ord
    FROM jsonb_array_elements(p_reports) WITH ORDINALITY t(x, ord)
  ),
  -- Each endpoint's attempts get consecutive times after its last one:
  -- strictly increasing, as one report at a time gives them.
  joined AS (
    SELECT r.d, r.a, r.s, r.ms, dl.endpoint_id, dl.event_no, (dl.state = 'pending' AND dl.attempts = r.a) AS live,
           greatest(v_now, w.last_attempt_ms + 1) + row_number() OVER (PARTITION BY dl.endpoint_id ORDER BY r.ord) - 1
             AS at_ms
    FROM rep r
    JOIN webhook_deliveries dl ON dl.delivery_id = r.d
    JOIN webhook_endpoints w ON w.endpoint_id = dl.endpoint_id
  ),
  recorded AS (
    INSERT INTO webhook_attempts (endpoint_id, attempted_ms, event_no, attempt, status, error, duration_ms)
    SELECT j.endpoint_id, j.at_ms, j.event_no, j.a, j.s, NULL, greatest(j.ms, 0) FROM joined j
  ),
  delivered AS (
    UPDATE webhook_deliveries dl SET state = 'delivered', next_at = NULL
    FROM joined j WHERE dl.delivery_id = j.d AND j.live
  ),
  endpoints AS (
    UPDATE webhook_endpoints w
    SET last_attempt_ms = m.last, failing_since = CASE WHEN m.any_live THEN NULL ELSE w.failing_since END
    FROM (SELECT j.endpoint_id, max(j.at_ms) AS last, bool_or(j.live) AS any_live FROM joined j
          GROUP BY j.endpoint_id) m
    WHERE w.endpoint_id = m.endpoint_id
  )
  -- Reclaimed after its lease, or its endpoint disabled or deleted: the
  -- attempt is on record, its outcome decides nothing (as one by one).
  SELECT r.d, r.a, CASE WHEN j.live THEN 'delivered' ELSE 'stale' END
  FROM rep r LEFT JOIN joined j ON j.d = r.d;
END $$;

-- /metrics: deliveries waiting to be sent, and how long the oldest is overdue.
CREATE FUNCTION mr_webhook_backlog() RETURNS TABLE (pending bigint, oldest_due_age_ms bigint)
LANGUAGE sql STABLE AS $$
  SELECT count(*), coalesce(max(mr_now_ms() - (extract(epoch FROM next_at) * 1000)::bigint), 0)
  FROM webhook_deliveries WHERE state = 'pending' AND next_at <= clock_timestamp()
$$;

-- Operators (mrctl, the ops listener): a club's endpoints with their
-- queues, failed attempts, and manual enable/disable.
CREATE FUNCTION mr_ops_webhook_endpoints(p_ref text) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT coalesce(jsonb_agg(mr_webhook_endpoint_json(w) || jsonb_build_object(
           'partnerRef', c.partner_ref,
           'pending', (SELECT count(*) FROM webhook_deliveries d
                       WHERE d.endpoint_id = w.endpoint_id AND d.state IN ('pending', 'paused')))
           ORDER BY c.partner_ref, w.created_at), '[]'::jsonb)
  FROM webhook_endpoints w JOIN clubs c USING (club_id)
  WHERE w.status <> 'deleted' AND (p_ref IS NULL OR c.partner_ref = p_ref)
$$;

CREATE FUNCTION mr_ops_webhook_failures(p_ref text, p_limit int) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT coalesce(jsonb_agg(j ORDER BY ms DESC), '[]'::jsonb) FROM (
    SELECT a.attempted_ms AS ms, jsonb_build_object(
             'partnerRef', c.partner_ref, 'endpointId', a.endpoint_id, 'eventId', e.event_id,
             'attempt', a.attempt, 'status', a.status, 'error', a.error, 'durationMs', a.duration_ms,
             'attemptedAt', mr_ms_text(a.attempted_ms)) AS j
    FROM webhook_attempts a JOIN webhook_endpoints w USING (endpoint_id) JOIN clubs c USING (club_id)
    JOIN events e USING (event_no)
    WHERE (a.status IS NULL OR a.status NOT BETWEEN 200 AND 299) AND (p_ref IS NULL OR c.partner_ref = p_ref)
    ORDER BY a.attempted_ms DESC LIMIT p_limit) x
$$;

CREATE FUNCTION mr_ops_webhook_status(p_endpoint_id text, p_status text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  IF p_status NOT IN ('enabled', 'disabled') THEN RAISE EXCEPTION 'status must be enabled or disabled'; END IF;
  SELECT * INTO v_row FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id AND status <> 'deleted' FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'no webhook endpoint %', p_endpoint_id USING ERRCODE = 'P0002'; END IF;
  IF v_row.status <> p_status THEN PERFORM mr_webhook_set_status(p_endpoint_id, p_status, 'manual'); END IF;
  SELECT * INTO v_row FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id;
  RETURN mr_webhook_endpoint_json(v_row);
END $$;

CREATE FUNCTION mr_ops_webhook_replay(p_endpoint_id text, p_since timestamptz) RETURNS jsonb
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id AND status <> 'deleted' FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'no webhook endpoint %', p_endpoint_id USING ERRCODE = 'P0002'; END IF;
  RETURN jsonb_build_object('endpointId', p_endpoint_id, 'replayed', mr_webhook_replay(p_endpoint_id, p_since));
END $$;

-- The event of a partner write that succeeded (not replayed): its type and
-- data from the operation's answer.
CREATE FUNCTION mr_emit_write(p_op text, p_club_id bigint, p_cmd jsonb, p_result jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_member bigint;
  v_data jsonb := p_result->'data';
BEGIN
  IF p_op NOT IN ('member', 'settle', 'reverse', 'redeem', 'close') THEN RETURN; END IF;
  SELECT member_id INTO v_member FROM members
  WHERE club_id = p_club_id AND external_id = p_cmd->>'externalMemberId';
  IF p_op = 'member' THEN
    PERFORM mr_emit(p_club_id, v_member, 'member.' || (p_result->>'outcome'), jsonb_build_object(
      'status', (SELECT status FROM members WHERE member_id = v_member), 'payoutReady', v_data->'payoutReady'));
  ELSIF p_op = 'settle' THEN
    PERFORM mr_emit(p_club_id, v_member, 'transaction.settled', jsonb_build_object(
      'eventId', v_data->'eventId', 'externalTransactionId', v_data->'externalTransactionId',
      'pointsAwarded', v_data->'pointsAwarded', 'balances', v_data->'balances',
      'ledgerGroupId', v_data->'ledgerGroupId'));
  ELSIF p_op = 'reverse' THEN
    PERFORM mr_emit(p_club_id, v_member, 'transaction.reversed', jsonb_build_object(
      'eventId', v_data->'eventId', 'externalTransactionId', v_data->'externalTransactionId',
      'pointsReversed', v_data->'pointsReversed', 'balances', v_data->'balances',
      'ledgerGroupId', v_data->'ledgerGroupId'));
  ELSIF p_op = 'redeem' THEN
    PERFORM mr_emit(p_club_id, v_member, 'redemption.created',
                    mr_redemption_json(v_data->>'redemptionId')
                      || jsonb_build_object('balances', mr_balances(v_member)));
  ELSE  -- close
    PERFORM mr_emit(p_club_id, v_member, 'member.closed', jsonb_build_object(
      'closedAt', v_data->'closedAt', 'pointsForfeited', v_data->'pointsForfeited',
      'balances', mr_balances(v_member)));
  END IF;
END $$;

-- 004's mr_write with the webhook endpoint ops and the sandbox test
-- helper, and the event of every change it makes.
CREATE OR REPLACE FUNCTION mr_write(p_op text, p_club_id bigint, p_partner_ref text, p_idem_key text,
                                    p_fingerprint text, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_record idempotency_records%ROWTYPE;
  v_result jsonb;
BEGIN
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

-- Events are kept as long as idempotency records: mrctl events prune.
CREATE FUNCTION mr_events_prune(p_days int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_n bigint;
BEGIN
  DELETE FROM events WHERE created_at < now() - p_days * interval '1 day';
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n;
END $$;
