-- The delivery statements keep their plans and still read only what a batch
-- names. Every plan here is made on a nearly empty
-- webhook_deliveries and kept (force_generic_plan: what a pool connection
-- keeps after five calls), then used once the table holds 50,000 delivered
-- rows: the claim and the report batch, steady state and failures, must
-- read about the batch's rows, where its earlier text, planned the same
-- way, reads the whole table. Rows read are this transaction's own
-- counters. Rolled back at the end.
BEGIN;
-- The statements' own settings (ledger/statements.hpp: by_index, and the
-- claim's enable_sort), and plans kept from the first call.
SET LOCAL enable_seqscan = off;
SET LOCAL enable_sort = off;
SET LOCAL jit = off;
SET LOCAL plan_cache_mode = force_generic_plan;
-- A nearly empty queue whatever the tests before left in it (this stack's
-- tests run one at a time; the engine's claims wait for the rollback).
TRUNCATE webhook_deliveries;

INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies)
VALUES ('hook-plans-' || txid_current(), 'Test', 100, '{GBP}') RETURNING club_id AS club \gset
INSERT INTO webhook_endpoints (endpoint_id, club_id, url, event_types, secret_sealed, status)
VALUES ('we_plans_' || :club, :club, 'https://a.example/h', '{}', 'sealed', 'enabled');
INSERT INTO events (event_id, club_id, type, data)
VALUES ('evt_plans_' || :club, :club, 'member.updated', '{}') RETURNING event_no AS event \gset
SELECT set_config('test.club', :'club', true) IS NOT NULL AS club_set \gset
SELECT set_config('test.event', :'event', true) IS NOT NULL AS event_set \gset

-- The report batch as it first was, its joins not bounded by the batch's
-- ids, as pg_temp.old_report_batch: the contrast.
\set earlier_fn mr_webhook_report_batch
\set earlier_as old_report_batch
\set earlier_edits '{{"LEFT JOIN LATERAL (SELECT w0.endpoint_id FROM webhook_deliveries w0 WHERE w0.delivery_id = (x->>''d'')::bigint LIMIT 1) w ON true", "LEFT JOIN webhook_deliveries w ON w.delivery_id = (x->>''d'')::bigint"}, {"JOIN webhook_deliveries dl ON dl.delivery_id = r.d AND dl.delivery_id = ANY (v_ids)", "JOIN webhook_deliveries dl ON dl.delivery_id = r.d"}, {"FROM joined j WHERE dl.delivery_id = j.d AND j.live AND dl.delivery_id = ANY (v_ids)", "FROM joined j WHERE dl.delivery_id = j.d AND j.live"}}'
\ir include/earlier_function.sql

-- Rows of webhook_deliveries this transaction has read so far, by any
-- scan.
CREATE FUNCTION pg_temp.delivery_reads() RETURNS bigint LANGUAGE sql AS $$
  SELECT (SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_xact_user_tables WHERE relname = 'webhook_deliveries')
       + (SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0) FROM pg_index
          WHERE indrelid = 'webhook_deliveries'::regclass)
$$;
-- A report of each delivery in ids, with this status.
CREATE FUNCTION pg_temp.reports(p_ids bigint[], p_status int) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_agg(jsonb_build_object('d', d, 'a', 1, 's', p_status, 'e', NULL, 'ms', 3, 'ra', NULL))
  FROM unnest(p_ids) d
$$;

DO $$
DECLARE
  v_club bigint := current_setting('test.club')::bigint;
  v_event bigint := current_setting('test.event')::bigint;
  v_ids bigint[];
  v_claimed bigint[];
  v_next text[];
  v_before bigint;
  v_read bigint;
  v_schedule int[] := '{0, 5000, 300000}';
BEGIN
  ASSERT (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
          WHERE p.oid = 'mr_webhook_claim(text, integer, integer)'::regprocedure) = 'plpgsql',
    'the claim is PL/pgSQL: its plan is kept, not made at every call';

  -- Sixteen deliveries due.
  WITH queued AS (
    INSERT INTO webhook_deliveries (endpoint_id, club_id, event_no, next_at)
    SELECT 'we_plans_' || v_club, v_club, v_event, '-infinity' FROM generate_series(1, 16)
    RETURNING delivery_id
  )
  SELECT array_agg(delivery_id ORDER BY delivery_id) INTO v_ids FROM queued;

  -- Every plan made now, on the small table: the claim, the report batch
  -- (2xx and a failure), and the earlier text's.
  SELECT array_agg(c.delivery_id) INTO v_claimed FROM mr_webhook_claim('sandbox', 4, 60000) c;
  ASSERT v_claimed <@ v_ids AND cardinality(v_claimed) = 4, format('claimed %s of %s', v_claimed, v_ids);
  PERFORM * FROM mr_webhook_report_batch(pg_temp.reports(v_claimed[1:2], 204), v_schedule);
  PERFORM * FROM mr_webhook_report_batch(pg_temp.reports(v_claimed[3:3], 500), v_schedule);
  PERFORM * FROM pg_temp.old_report_batch(pg_temp.reports(v_claimed[1:2], 204), v_schedule);

  INSERT INTO webhook_deliveries (endpoint_id, club_id, event_no, state, attempts, next_at)
  SELECT 'we_plans_' || v_club, v_club, v_event, 'delivered', 1, NULL FROM generate_series(1, 50000);

  v_before := pg_temp.delivery_reads();
  SELECT array_agg(c.delivery_id) INTO v_claimed FROM mr_webhook_claim('sandbox', 8, 60000) c;
  v_read := pg_temp.delivery_reads() - v_before;
  ASSERT v_claimed <@ v_ids AND cardinality(v_claimed) = 8, format('claimed %s of %s', v_claimed, v_ids);
  ASSERT v_read <= 100, format('the claim of 8 read %s deliveries', v_read);

  -- Their outcomes as the contract has them: 2xx delivered, a 500 retried
  -- after the schedule's next wait, each attempt on record.
  v_before := pg_temp.delivery_reads();
  SELECT array_agg(b.next) INTO v_next FROM mr_webhook_report_batch(pg_temp.reports(v_claimed[1:4], 204), v_schedule) b;
  v_read := pg_temp.delivery_reads() - v_before;
  ASSERT v_read <= 100, format('a report batch of 4 read %s deliveries', v_read);
  ASSERT v_next = '{delivered,delivered,delivered,delivered}', format('2xx reports came to %s', v_next);
  ASSERT (SELECT count(*) FROM webhook_deliveries WHERE delivery_id = ANY (v_claimed[1:4]) AND state = 'delivered') = 4,
    'the batch delivered its four';

  v_before := pg_temp.delivery_reads();
  SELECT array_agg(b.next) INTO v_next FROM mr_webhook_report_batch(pg_temp.reports(v_claimed[5:8], 500), v_schedule) b;
  v_read := pg_temp.delivery_reads() - v_before;
  ASSERT v_read <= 100, format('a failed report batch of 4 read %s deliveries', v_read);
  ASSERT v_next = '{retry,retry,retry,retry}', format('500 reports came to %s', v_next);
  ASSERT (SELECT count(*) FROM webhook_deliveries WHERE delivery_id = ANY (v_claimed[5:8]) AND state = 'pending'
            AND next_at > clock_timestamp() + interval '4 s' AND next_at <= clock_timestamp() + interval '5 s') = 4,
    'the failed four wait the schedule''s 5 s';
  -- Five: these four and the one made with the plans.
  ASSERT (SELECT count(*) FROM webhook_attempts WHERE endpoint_id = 'we_plans_' || v_club AND status = 500) = 5,
    'the failed attempts are on record';

  -- The contrast: the earlier body, its plan made the same way.
  v_before := pg_temp.delivery_reads();
  PERFORM * FROM pg_temp.old_report_batch(pg_temp.reports(v_claimed[1:4], 204), v_schedule);
  v_read := pg_temp.delivery_reads() - v_before;
  ASSERT v_read >= 50000, format('the earlier report batch of 4 read only %s deliveries', v_read);
END $$;

ROLLBACK;
