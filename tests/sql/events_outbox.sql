-- The outbox (014): every committed change has exactly one event, of the
-- contract's type and data, written by the change's own transaction; a
-- replay, a refusal, a repeated payout report and a rolled-back change
-- write none; memberSequence counts 1, 2, 3... per member with no gap, also
-- through the batched settles; each event is queued once for every enabled
-- endpoint whose types match. Then the events API's cursor against commits
-- out of order (dblink: one transaction holds its event uncommitted while a
-- later one commits). Leaves one club with a unique ref behind.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;

\set club_prefix sql-events
\set club_members 3
\set club_pool 1000000
\ir include/test_club.sql

UPDATE clubs SET redemption_rate_minor = 1, payout_currency = 'GBP' WHERE club_id = (SELECT club FROM test_club);
SELECT mr_capacity_topup(ref, 1000000) IS NOT NULL AS capacity_topped_up FROM test_club \gset

CREATE FUNCTION pg_temp.w(p_op text, p_key text, p_cmd jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT mr_write(p_op, club, ref, p_key, md5(p_cmd::text), 'req-' || p_key, p_cmd || jsonb_build_object('partnerRef', ref))
  FROM test_club
$$;
CREATE FUNCTION pg_temp.events_count() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM events WHERE club_id = (SELECT club FROM test_club)
$$;
-- The newest event of the club: asserts its type and that data holds
-- exactly the keys named (beside externalMemberId and memberSequence).
CREATE FUNCTION pg_temp.expect_event(p_type text, p_keys text[], p_member text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v events%ROWTYPE;
  v_keys text[];
BEGIN
  SELECT * INTO v FROM events WHERE club_id = (SELECT club FROM test_club) ORDER BY event_no DESC LIMIT 1;
  IF v.type IS DISTINCT FROM p_type THEN RAISE EXCEPTION 'expected a % event, the newest is %', p_type, v.type; END IF;
  SELECT array_agg(k ORDER BY k) INTO v_keys FROM jsonb_object_keys(v.data) k;
  IF v_keys <> (SELECT array_agg(k ORDER BY k) FROM unnest(p_keys || '{externalMemberId,memberSequence}'::text[]) k) THEN
    RAISE EXCEPTION '% data has keys %, the contract gives %', p_type, v_keys, p_keys;
  END IF;
  IF v.data->>'externalMemberId' <> p_member THEN
    RAISE EXCEPTION '% names member %, not %', p_type, v.data->>'externalMemberId', p_member;
  END IF;
  IF v.event_id !~ '^evt_[0-9a-f]{24}$' THEN RAISE EXCEPTION 'event id %', v.event_id; END IF;
  RETURN v.data;
END $$;
-- Asserts the change wrote exactly p_n events.
CREATE FUNCTION pg_temp.expect_new(p_before bigint, p_n int, p_what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF pg_temp.events_count() - p_before <> p_n THEN
    RAISE EXCEPTION '%: % events written, expected %', p_what, pg_temp.events_count() - p_before, p_n;
  END IF;
END $$;

-- Two endpoints: one for every type, one for member.closed alone, and a
-- disabled one that must get nothing.
INSERT INTO webhook_endpoints (endpoint_id, club_id, url, event_types, secret_sealed, status, disabled_reason)
SELECT 'we_all_' || club, club, 'https://a.example/h', '{}'::text[], 'sealed', 'enabled', NULL FROM test_club
UNION ALL SELECT 'we_closed_' || club, club, 'https://b.example/h', '{member.closed}', 'sealed', 'enabled', NULL FROM test_club
UNION ALL SELECT 'we_off_' || club, club, 'https://c.example/h', '{}', 'sealed', 'disabled', 'manual' FROM test_club;

DO $$
DECLARE
  n bigint;
  d jsonb;
  r jsonb;
  v_red text;
BEGIN
  -- member.created / member.updated: status and payoutReady, nothing personal.
  n := pg_temp.events_count();
  r := pg_temp.w('member', 'ev-m1', '{"externalMemberId":"new1","firstName":"Ann","lastName":"Lee","email":"a@b.c",
       "wallet":{"provider":"bank","walletRef":"w","status":"active",
                 "bankAccount":{"accountNumber":"12345678","sortCode":"112233","name":"Ann Lee"}}}');
  PERFORM pg_temp.expect_new(n, 1, 'member create');
  d := pg_temp.expect_event('member.created', '{status,payoutReady}', 'new1');
  IF d->>'status' <> 'active' OR (d->>'payoutReady')::boolean IS NOT TRUE OR d->>'memberSequence' <> '1' THEN
    RAISE EXCEPTION 'member.created data %', d;
  END IF;
  n := pg_temp.events_count();
  PERFORM pg_temp.w('member', 'ev-m1', '{"externalMemberId":"new1","firstName":"Ann","lastName":"Lee","email":"a@b.c",
       "wallet":{"provider":"bank","walletRef":"w","status":"active",
                 "bankAccount":{"accountNumber":"12345678","sortCode":"112233","name":"Ann Lee"}}}');
  PERFORM pg_temp.expect_new(n, 0, 'a replayed upsert');
  PERFORM pg_temp.w('member', 'ev-m2', '{"externalMemberId":"new1","firstName":"Ann","lastName":"Lee","email":"x@b.c"}');
  d := pg_temp.expect_event('member.updated', '{status,payoutReady}', 'new1');
  IF d->>'memberSequence' <> '2' THEN RAISE EXCEPTION 'member.updated sequence %', d; END IF;

  -- transaction.settled, and nothing for a refused one or a replay.
  n := pg_temp.events_count();
  r := pg_temp.w('settle', 'ev-s1', pg_temp.settle_cmd('new1', 'ev-tx1', 250000));
  d := pg_temp.expect_event('transaction.settled',
                            '{eventId,externalTransactionId,pointsAwarded,balances,ledgerGroupId}', 'new1');
  IF d->'balances' <> r->'data'->'balances' OR d->'pointsAwarded' <> r->'data'->'pointsAwarded'
     OR d->>'ledgerGroupId' <> r->'data'->>'ledgerGroupId' OR d->>'memberSequence' <> '3' THEN
    RAISE EXCEPTION 'transaction.settled data % against the answer %', d, r;
  END IF;
  PERFORM pg_temp.w('settle', 'ev-s1', pg_temp.settle_cmd('new1', 'ev-tx1', 250000));
  PERFORM pg_temp.w('settle', 'ev-s2', pg_temp.settle_cmd('new1', 'ev-tx1', 250000));  -- duplicate_transaction
  PERFORM pg_temp.w('settle', 'ev-s3', pg_temp.settle_cmd('nobody', 'ev-tx9', 100));   -- cardholder_not_found
  PERFORM pg_temp.expect_new(n, 1, 'a settle, its replay and two refusals');

  -- A change rolled back leaves no event.
  n := pg_temp.events_count();
  BEGIN
    PERFORM pg_temp.w('settle', 'ev-s4', pg_temp.settle_cmd('new1', 'ev-tx-rolled', 1000));
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'roll back';
  EXCEPTION WHEN OTHERS THEN
    IF SQLERRM <> 'roll back' THEN RAISE; END IF;
  END;
  PERFORM pg_temp.expect_new(n, 0, 'a rolled-back settle');

  -- transaction.reversed
  r := pg_temp.w('reverse', 'ev-r1', '{"externalMemberId":"new1","eventId":"rev1","occurredAt":"2026-11-22T11:00:00Z",
       "externalTransactionId":"ev-tx1","amountMinor":1000,"currency":"GBP"}');
  d := pg_temp.expect_event('transaction.reversed',
                            '{eventId,externalTransactionId,pointsReversed,balances,ledgerGroupId}', 'new1');
  IF d->'pointsReversed' <> r->'data'->'pointsReversed' OR d->>'memberSequence' <> '4' THEN
    RAISE EXCEPTION 'transaction.reversed data % against %', d, r;
  END IF;

  -- redemption.created, .completed (the test helper), nothing for a second
  -- report of the same result, then .failed for another.
  r := pg_temp.w('redeem', 'ev-d1', '{"externalMemberId":"new1","requestId":"rq1","points":100,"currency":"GBP"}');
  IF r->>'outcome' <> 'accepted' THEN RAISE EXCEPTION 'redeem: %', r; END IF;
  v_red := r->'data'->>'redemptionId';
  d := pg_temp.expect_event('redemption.created', '{redemptionId,requestId,status,pointsRedeemed,cashValueMinor,
        currency,payout,createdAt,updatedAt,balances}', 'new1');
  IF d->>'status' <> 'payout_pending' OR d->>'redemptionId' <> v_red THEN RAISE EXCEPTION 'redemption.created %', d; END IF;
  PERFORM pg_temp.w('test_payout', 'ev-p1', jsonb_build_object('redemptionId', v_red, 'outcome', 'succeeded'));
  d := pg_temp.expect_event('redemption.completed', '{redemptionId,requestId,status,pointsRedeemed,cashValueMinor,
        currency,payout,createdAt,updatedAt,balances}', 'new1');
  IF d->>'status' <> 'completed' OR d->'payout'->>'status' <> 'succeeded' THEN RAISE EXCEPTION 'completed %', d; END IF;
  n := pg_temp.events_count();
  PERFORM mr_payout_move((SELECT payout_id FROM payouts WHERE redemption_id = v_red), 'succeeded');
  r := pg_temp.w('test_payout', 'ev-p2', jsonb_build_object('redemptionId', v_red, 'outcome', 'failed'));
  IF r->>'outcome' <> 'payout_state_conflict' THEN RAISE EXCEPTION 'a contradicting report: %', r; END IF;
  PERFORM pg_temp.expect_new(n, 0, 'a repeated report and a contradicting one');
  r := pg_temp.w('redeem', 'ev-d2', '{"externalMemberId":"new1","requestId":"rq2","points":100,"currency":"GBP"}');
  PERFORM mr_payout_move((SELECT payout_id FROM payouts WHERE redemption_id = r->'data'->>'redemptionId'),
                         'failed', 'bank said no');
  d := pg_temp.expect_event('redemption.failed', '{redemptionId,requestId,status,pointsRedeemed,cashValueMinor,
        currency,payout,createdAt,updatedAt,balances}', 'new1');
  IF d->'payout'->>'failureReason' <> 'bank said no' THEN RAISE EXCEPTION 'failed %', d; END IF;

  -- points.adjusted (mrctl member adjust)
  PERFORM mr_adjust((SELECT ref FROM test_club), 'new1', -7, 'correction');
  d := pg_temp.expect_event('points.adjusted', '{pointsDelta,reason,balances}', 'new1');
  IF d->>'pointsDelta' <> '-7' OR d->>'reason' <> 'correction' THEN RAISE EXCEPTION 'points.adjusted %', d; END IF;

  -- member.closed
  r := pg_temp.w('close', 'ev-c1', '{"externalMemberId":"new1"}');
  d := pg_temp.expect_event('member.closed', '{closedAt,pointsForfeited,balances}', 'new1');
  IF d->'pointsForfeited' <> r->'data'->'pointsForfeited' OR d->'balances'->>'pointsBalance' <> '0' THEN
    RAISE EXCEPTION 'member.closed % against %', d, r;
  END IF;

  -- Batched settles: one event each, in the batch's order per member.
  n := pg_temp.events_count();
  PERFORM mr_write_batch(jsonb_build_array(
    jsonb_build_array('settle', club::text, ref, 'ev-b1', 'fp1', 'rb1', pg_temp.settle_cmd('m0', 'ev-btx1') || jsonb_build_object('partnerRef', ref)),
    jsonb_build_array('settle', club::text, ref, 'ev-b2', 'fp2', 'rb2', pg_temp.settle_cmd('m1', 'ev-btx2') || jsonb_build_object('partnerRef', ref)),
    jsonb_build_array('settle', club::text, ref, 'ev-b3', 'fp3', 'rb3', pg_temp.settle_cmd('m0', 'ev-btx3') || jsonb_build_object('partnerRef', ref)),
    jsonb_build_array('settle', club::text, ref, 'ev-b4', 'fp4', 'rb4', pg_temp.settle_cmd('m0', 'ev-tx1')),  -- duplicate_transaction
    -- a replay of a record kept before (pg_temp.w's fingerprint)
    jsonb_build_array('settle', club::text, ref, 'ev-s1', md5(pg_temp.settle_cmd('new1', 'ev-tx1', 250000)::text), 'rb5',
                      pg_temp.settle_cmd('new1', 'ev-tx1', 250000))))
  FROM test_club;
  PERFORM pg_temp.expect_new(n, 3, 'a batch of three awards, a duplicate and a replay');
  IF (SELECT array_agg(data->>'externalTransactionId' || '@' || (data->>'memberSequence') ORDER BY event_no)
      FROM events WHERE club_id = (SELECT club FROM test_club) AND event_no > (
        SELECT max(event_no) FROM events WHERE club_id = (SELECT club FROM test_club) AND type = 'member.closed'))
     <> '{ev-btx1@1,ev-btx2@1,ev-btx3@2}' THEN
    RAISE EXCEPTION 'batched events: %', (SELECT array_agg(data ORDER BY event_no) FROM events
                                          WHERE club_id = (SELECT club FROM test_club) AND type = 'transaction.settled');
  END IF;
END $$;

-- memberSequence is 1..n without gaps for every member, and matches event order.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM (
      SELECT data->>'externalMemberId' AS m, (data->>'memberSequence')::bigint AS s,
             row_number() OVER (PARTITION BY data->>'externalMemberId' ORDER BY event_no) AS expected
      FROM events WHERE club_id = (SELECT club FROM test_club)) x WHERE s <> expected) THEN
    RAISE EXCEPTION 'memberSequence has a gap or runs out of order';
  END IF;
  IF EXISTS (SELECT 1 FROM members m WHERE club_id = (SELECT club FROM test_club)
             AND event_seq <> (SELECT count(*) FROM events e WHERE e.club_id = m.club_id
                               AND e.data->>'externalMemberId' = m.external_id)) THEN
    RAISE EXCEPTION 'a member''s event_seq is not its number of events';
  END IF;
END $$;

-- Fan-out: every event once to the all-types endpoint, member.closed alone
-- to the filtered one, nothing to the disabled one.
DO $$
DECLARE
  v_club bigint := (SELECT club FROM test_club);
BEGIN
  IF (SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = 'we_all_' || v_club)
     <> (SELECT count(*) FROM events WHERE club_id = v_club)
     OR (SELECT count(DISTINCT event_no) FROM webhook_deliveries WHERE endpoint_id = 'we_all_' || v_club)
     <> (SELECT count(*) FROM events WHERE club_id = v_club) THEN
    RAISE EXCEPTION 'the all-types endpoint did not get every event exactly once';
  END IF;
  IF (SELECT array_agg(e.type) FROM webhook_deliveries d JOIN events e USING (event_no)
      WHERE d.endpoint_id = 'we_closed_' || v_club) <> '{member.closed}' THEN
    RAISE EXCEPTION 'the member.closed endpoint got %', (SELECT array_agg(e.type) FROM webhook_deliveries d
                                                         JOIN events e USING (event_no)
                                                         WHERE d.endpoint_id = 'we_closed_' || v_club);
  END IF;
  IF EXISTS (SELECT 1 FROM webhook_deliveries WHERE endpoint_id = 'we_off_' || v_club) THEN
    RAISE EXCEPTION 'the disabled endpoint got deliveries';
  END IF;
END $$;

-- The cursor against commits out of order: A starts first and writes its
-- event, B writes and commits after it, then A commits. A reader paging
-- between the two commits must not step past A's event.
SELECT format('host=%s port=%s dbname=%s user=%s',
              coalesce(host(inet_server_addr()), split_part(current_setting('unix_socket_directories'), ',', 1)),
              current_setting('port'), current_database(), current_user) AS dsn \gset
SELECT dblink_connect('ev_a', :'dsn'), dblink_connect('ev_b', :'dsn');
-- The club's page of events after p_after, polled for up to 20 seconds
-- until it lists at least p_entries: other tests share this database, and
-- one of their transactions older than ours may hold the listing back for a
-- moment. The page as it is at the deadline otherwise.
CREATE FUNCTION pg_temp.events_polled(p_after text, p_request_id text, p_entries bigint) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_page jsonb;
  v_deadline timestamptz := clock_timestamp() + interval '20 seconds';
BEGIN
  LOOP
    v_page := (SELECT mr_events(club, 'sandbox', p_after, 100, NULL, p_request_id) FROM test_club);
    EXIT WHEN jsonb_array_length(v_page->'data'->'entries') >= p_entries OR clock_timestamp() > v_deadline;
    PERFORM pg_sleep(0.02);
  END LOOP;
  RETURN v_page;
END $$;
-- cursor0: past every event of the club so far.
CREATE TEMP TABLE ev_cursor (c text);
DO $$
DECLARE
  v_page jsonb := pg_temp.events_polled(NULL, 'r0', pg_temp.events_count());
BEGIN
  IF jsonb_array_length(v_page->'data'->'entries') <> pg_temp.events_count() THEN
    RAISE EXCEPTION 'committed events not listed: %', v_page;
  END IF;
  INSERT INTO ev_cursor VALUES (v_page->'data'->>'nextAfter');
END $$;
SELECT dblink_exec('ev_a', 'BEGIN');
SELECT r->>'outcome' AS outcome_a FROM test_club, dblink('ev_a', format('SELECT mr_write(%L, %s, %L, %L, %L, %L, %L::jsonb)', 'settle', club, ref, 'ev-oo-a',
                                  'fa', 'ra', pg_temp.settle_cmd('m2', 'ev-oo-a'))) AS t(r jsonb);
SELECT r->>'outcome' AS outcome_b FROM test_club, dblink('ev_b', format('SELECT mr_write(%L, %s, %L, %L, %L, %L, %L::jsonb)', 'settle', club, ref, 'ev-oo-b',
                                  'fb', 'rb', pg_temp.settle_cmd('m1', 'ev-oo-b'))) AS t(r jsonb);
DO $$
DECLARE
  v_page jsonb := (SELECT mr_events(club, 'sandbox', (SELECT c FROM ev_cursor), 100, NULL, 'r1') FROM test_club);
BEGIN
  -- B committed, but A (an older transaction) still runs: nothing yet.
  IF jsonb_array_length(v_page->'data'->'entries') <> 0 THEN
    RAISE EXCEPTION 'listed past a running older transaction: %', v_page;
  END IF;
  IF v_page->'data'->>'nextAfter' IS DISTINCT FROM (SELECT c FROM ev_cursor) THEN
    RAISE EXCEPTION 'an empty page moved the cursor: %', v_page;
  END IF;
END $$;
SELECT dblink_exec('ev_a', 'COMMIT');
DO $$
DECLARE
  v_page jsonb := pg_temp.events_polled((SELECT c FROM ev_cursor), 'r2', 1);
BEGIN
  IF (SELECT array_agg(e->'data'->>'externalTransactionId' ORDER BY o) FROM jsonb_array_elements(v_page->'data'->'entries')
      WITH ORDINALITY x(e, o)) <> '{ev-oo-a,ev-oo-b}' THEN
    RAISE EXCEPTION 'after both commits the page is %', v_page;
  END IF;
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_page->'data'->'entries') e WHERE e->>'environment' <> 'sandbox') THEN
    RAISE EXCEPTION 'environment missing: %', v_page;
  END IF;
  -- Paging on from the last cursor lists nothing again.
  IF jsonb_array_length((SELECT mr_events(club, 'sandbox', v_page->'data'->>'nextAfter', 100, NULL, 'r3')
                         FROM test_club)->'data'->'entries') <> 0 THEN
    RAISE EXCEPTION 'an event was listed twice';
  END IF;
END $$;
SELECT dblink_disconnect('ev_a'), dblink_disconnect('ev_b');

-- Malformed and expired cursors, and another club's view.
INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies)
SELECT ref || '-other', 'Other', 100, '{GBP}' FROM test_club;
SELECT mr_write('member', c.club_id, c.partner_ref, 'other-k', 'fp', 'r',
                jsonb_build_object('partnerRef', c.partner_ref, 'externalMemberId', 'new1',
                                   'firstName', 'A', 'lastName', 'B', 'email', 'o@b.c'))->>'outcome' AS other_outcome
FROM clubs c WHERE c.partner_ref = (SELECT ref FROM test_club) || '-other';
DO $$
DECLARE
  v_club bigint := (SELECT club FROM test_club);
  v_other bigint;
  v jsonb;
BEGIN
  v := mr_events(v_club, 'sandbox', 'cur_zz', 10, NULL, 'r');
  IF v->>'outcome' <> 'invalid_request' OR v->'details'->0->>'field' <> 'after' THEN RAISE EXCEPTION 'malformed: %', v; END IF;
  v := mr_events(v_club, 'sandbox', 'cur_' || repeat('0', 15) || '1' || repeat('0', 15) || '1' || repeat('0', 15) || '1',
                 10, NULL, 'r');
  IF v->>'outcome' <> 'invalid_request' THEN RAISE EXCEPTION 'a cursor of 1970 was accepted: %', v; END IF;
  -- Another club, with an event of its own (committed above), lists only that one.
  v_other := (SELECT club_id FROM clubs WHERE partner_ref = (SELECT ref FROM test_club) || '-other');
  FOR i IN 1..1000 LOOP
    v := mr_events(v_other, 'sandbox', NULL, 100, NULL, 'r');
    EXIT WHEN jsonb_array_length(v->'data'->'entries') > 0;
    PERFORM pg_sleep(0.02);
  END LOOP;
  IF jsonb_array_length(v->'data'->'entries') <> 1 OR v->'data'->'entries'->0->>'type' <> 'member.created' THEN
    RAISE EXCEPTION 'the other club lists %', v;
  END IF;
END $$;

-- Contract section 10: an endpoint whose every attempt failed for 5 days is
-- disabled (failing), its queue paused; 4 days of failures are only a
-- retry. Inside a subtransaction rolled back, so the stack's delivery
-- workers never see these rows.
DO $$
DECLARE
  v_club bigint := (SELECT club FROM test_club);
  v_event bigint := (SELECT max(event_no) FROM events WHERE club_id = (SELECT club FROM test_club));
  v_delivery bigint;
  v_outcome text;
  v_row webhook_endpoints%ROWTYPE;
BEGIN
  BEGIN
    FOREACH v_outcome IN ARRAY ARRAY['4 days', '6 days'] LOOP
      INSERT INTO webhook_endpoints (endpoint_id, club_id, url, secret_sealed, failing_since)
      VALUES ('we_fail_' || v_outcome, v_club, 'https://f.example/h', 'sealed',
              now() - v_outcome::interval);
      -- As a claim leaves it: attempt 1 in flight.
      INSERT INTO webhook_deliveries (endpoint_id, club_id, event_no, attempts, next_at)
      VALUES ('we_fail_' || v_outcome, v_club, v_event, 1, now() + interval '1 minute')
      RETURNING delivery_id INTO v_delivery;
      IF mr_webhook_report(v_delivery, 1, 500, NULL, 12, NULL, '{0,5000,300000}')
         IS DISTINCT FROM (CASE v_outcome WHEN '6 days' THEN 'failing' ELSE 'retry' END) THEN
        RAISE EXCEPTION 'after % of failures the report said %', v_outcome,
          mr_webhook_report(v_delivery, 1, 500, NULL, 12, NULL, '{0,5000,300000}');
      END IF;
      SELECT * INTO v_row FROM webhook_endpoints WHERE endpoint_id = 'we_fail_' || v_outcome;
      IF v_outcome = '6 days' AND (v_row.status <> 'disabled' OR v_row.disabled_reason IS DISTINCT FROM 'failing'
                                   OR (SELECT state FROM webhook_deliveries WHERE delivery_id = v_delivery) <> 'paused') THEN
        RAISE EXCEPTION 'five failing days left the endpoint % (%), its delivery %', v_row.status,
          v_row.disabled_reason, (SELECT state FROM webhook_deliveries WHERE delivery_id = v_delivery);
      END IF;
      IF v_outcome = '4 days' AND (v_row.status <> 'enabled'
                                   OR (SELECT state FROM webhook_deliveries WHERE delivery_id = v_delivery) <> 'pending') THEN
        RAISE EXCEPTION 'four failing days disabled the endpoint: %', v_row.status;
      END IF;
    END LOOP;
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'undo the failing endpoints';
  EXCEPTION WHEN OTHERS THEN
    IF SQLERRM <> 'undo the failing endpoints' THEN RAISE; END IF;
  END;
END $$;

-- mrctl events prune (mr_events_prune, 30 days): an event older than that
-- goes with its deliveries and its attempts (024 made these the prune's own
-- statements; no foreign key cascades them any more), and the club's newer
-- events keep theirs. Rolled back like the block above.
DO $$
DECLARE
  v_club bigint := (SELECT club FROM test_club);
  v_old bigint;
  v_kept bigint;
  v_n bigint;
BEGIN
  SELECT min(event_no), max(event_no) INTO v_old, v_kept FROM events e
  WHERE e.club_id = v_club AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_no = e.event_no);
  IF v_old IS NULL OR v_old = v_kept THEN
    RAISE EXCEPTION 'the club has no two events with deliveries to prune one of';
  END IF;
  BEGIN
    INSERT INTO webhook_attempts (endpoint_id, attempted_ms, event_no, attempt, status, duration_ms)
    SELECT d.endpoint_id, -e.event_no, e.event_no, 1, 500, 3
    FROM webhook_deliveries d JOIN events e USING (event_no) WHERE e.event_no IN (v_old, v_kept);
    UPDATE events SET created_at = now() - interval '40 days' WHERE event_no = v_old;
    v_n := mr_events_prune(30);
    IF v_n <> 1 OR EXISTS (SELECT 1 FROM events WHERE event_no = v_old)
       OR EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_no = v_old)
       OR EXISTS (SELECT 1 FROM webhook_attempts WHERE event_no = v_old) THEN
      RAISE EXCEPTION 'the prune said % and left event %: % deliveries, % attempts', v_n,
        (SELECT count(*) FROM events WHERE event_no = v_old),
        (SELECT count(*) FROM webhook_deliveries WHERE event_no = v_old),
        (SELECT count(*) FROM webhook_attempts WHERE event_no = v_old);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_no = v_kept)
       OR NOT EXISTS (SELECT 1 FROM webhook_attempts WHERE event_no = v_kept) THEN
      RAISE EXCEPTION 'the prune took the deliveries or attempts of event %, 0 days old', v_kept;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'undo the prune';
  EXCEPTION WHEN OTHERS THEN
    IF SQLERRM <> 'undo the prune' THEN RAISE; END IF;
  END;
END $$;
