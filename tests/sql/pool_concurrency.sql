-- Concurrent awards and reversals through mr_write on 8 connections at once
-- (dblink, each statement its own transaction as the nginx module sends
-- them): no lost update, no deadlock, and the pool is never overdrawn and
-- refuses exactly what it cannot cover, also while its stripes are being
-- consolidated. Needs committed data, so it leaves one club with a unique
-- ref and consistent books behind.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;

-- 32 members and a pool of exactly 200 points (20 awards of 10).
\set club_prefix sql-race
\set club_members 32
\set club_pool 200
\ir include/test_club.sql

-- Runs p_statements spread over 8 connections, each statement alone in its
-- own transaction, up to 8 at a time; returns each statement's jsonb result
-- or 'error: ...'.
CREATE FUNCTION pg_temp.run_parallel(p_statements text[]) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  v_dsn text := format('host=%s port=%s dbname=%s user=%s',
                       coalesce(host(inet_server_addr()), split_part(current_setting('unix_socket_directories'), ',', 1)),
                       current_setting('port'), current_database(), current_user);
  v_conns int := 8;
  v_next int := 1;
  v_running int[] := array_fill(0, ARRAY[8]);  -- statement index running on each connection
  v_results text[] := array_fill(NULL::text, ARRAY[cardinality(p_statements)]);
  v_done int := 0;
  v_res text;
  v_deadline timestamptz := clock_timestamp() + interval '120 seconds';
BEGIN
  FOR c IN 1..v_conns LOOP
    PERFORM dblink_connect('race' || c, v_dsn);
  END LOOP;
  WHILE v_done < cardinality(p_statements) LOOP
    FOR c IN 1..v_conns LOOP
      IF v_running[c] > 0 AND dblink_is_busy('race' || c) = 0 THEN
        BEGIN
          SELECT r INTO v_res FROM dblink_get_result('race' || c) AS t(r text);
        EXCEPTION WHEN OTHERS THEN
          v_res := 'error: ' || SQLERRM;
        END;
        PERFORM * FROM dblink_get_result('race' || c, false) AS t(r text);  -- the closing empty result
        v_results[v_running[c]] := v_res;
        v_running[c] := 0;
        v_done := v_done + 1;
      END IF;
      IF v_running[c] = 0 AND v_next <= cardinality(p_statements) THEN
        PERFORM dblink_send_query('race' || c, p_statements[v_next]);
        v_running[c] := v_next;
        v_next := v_next + 1;
      END IF;
    END LOOP;
    IF clock_timestamp() > v_deadline THEN
      RAISE EXCEPTION 'statements still running after 120 s: %', (SELECT array_agg(v_running[c]) FROM generate_series(1, 8) c);
    END IF;
    PERFORM pg_sleep(0.0005);
  END LOOP;
  FOR c IN 1..v_conns LOOP
    PERFORM dblink_disconnect('race' || c);
  END LOOP;
  RETURN v_results;
END $$;

CREATE FUNCTION pg_temp.settle_sql(p_member text, p_tx text, p_amount bigint) RETURNS text LANGUAGE sql AS $$
  SELECT format('SELECT mr_write(%L, %s, %L, %L, %L, %L, %L::jsonb)::text', 'settle', club, ref, 'k-' || p_tx, 'f',
    'req', pg_temp.settle_cmd(p_member, p_tx, p_amount))
  FROM test_club
$$;

DO $$
DECLARE
  v_ref text := (SELECT ref FROM test_club);
  v_club bigint := (SELECT club FROM test_club);
  v_results text[];
  v_ok int;
  v_refused int;
  v_sql text[];
BEGIN
  -- 400 awards of 10 points for 32 members against a pool of 200: exactly 20
  -- are made (the last ones only after consolidating the stripes), 380
  -- refused, each refusal a consolidation racing the others.
  SELECT array_agg(pg_temp.settle_sql('m' || (i % 32), 'a-' || i, 1000) ORDER BY i) INTO v_sql
  FROM generate_series(1, 400) i;
  v_results := pg_temp.run_parallel(v_sql);
  SELECT count(*) FILTER (WHERE r::jsonb->>'outcome' = 'ok'),
         count(*) FILTER (WHERE r::jsonb->>'outcome' = 'insufficient_partner_points_pool')
    INTO v_ok, v_refused FROM unnest(v_results) r WHERE r NOT LIKE 'error:%';
  IF EXISTS (SELECT 1 FROM unnest(v_results) r WHERE r LIKE 'error:%') THEN
    RAISE EXCEPTION 'failed awards: %', (SELECT string_agg(DISTINCT r, '; ') FROM unnest(v_results) r WHERE r LIKE 'error:%');
  END IF;
  ASSERT v_ok = 20 AND v_refused = 380, format('%s awards, %s refused; pool %s', v_ok, v_refused, mr_pool_total(v_club));
  ASSERT mr_pool_total(v_club) = 0, 'pool used exactly';
  ASSERT (SELECT sum(available) FROM members WHERE club_id = v_club) = 200, 'members got exactly the pool';

END $$;

-- Committed on its own: the driver below must hold no row the workers need.
SELECT mr_pool_topup(ref, 100000) IS NOT NULL AS topped_up FROM test_club \gset

DO $$
DECLARE
  v_ref text := (SELECT ref FROM test_club);
  v_club bigint := (SELECT club FROM test_club);
  v_results text[];
  v_sql text[];
  v_before bigint;
  v_entries bigint;
  v_pool bigint;
BEGIN
  -- One member: 20 awards at once; then 40 more awards and two half
  -- reversals of each of the first 20 at once. Every change lands once,
  -- nothing is lost, createdAt stays strictly increasing.
  SELECT available, (SELECT count(*) FROM ledger_entries e WHERE e.member_id = m.member_id), mr_pool_total(v_club)
    INTO v_before, v_entries, v_pool FROM members m WHERE club_id = v_club AND external_id = 'm0';
  SELECT array_agg(pg_temp.settle_sql('m0', 'b-' || i, 1000) ORDER BY i) INTO v_sql FROM generate_series(1, 20) i;
  v_results := pg_temp.run_parallel(v_sql);
  SELECT array_agg(s ORDER BY random()) INTO v_sql FROM (
    SELECT pg_temp.settle_sql('m0', 'c-' || i, 1000) AS s FROM generate_series(1, 40) i
    UNION ALL
    SELECT format('SELECT mr_write(%L, %s, %L, %L, %L, %L, %L::jsonb)::text', 'reverse', v_club, v_ref,
             'k-rev-' || i || '-' || half, 'f', 'req', jsonb_build_object('partnerRef', v_ref, 'eventId', 'rv',
             'occurredAt', '2026-11-22T10:00:00Z', 'externalMemberId', 'm0', 'externalTransactionId', 'b-' || i,
             'amountMinor', 500, 'currency', 'GBP'))
    FROM generate_series(1, 20) i, generate_series(1, 2) half) x;
  v_results := v_results || pg_temp.run_parallel(v_sql);
  IF EXISTS (SELECT 1 FROM unnest(v_results) r WHERE r LIKE 'error:%' OR r::jsonb->>'outcome' <> 'ok') THEN
    RAISE EXCEPTION 'not every change was made: %',
      (SELECT string_agg(DISTINCT r, '; ') FROM unnest(v_results) r WHERE r LIKE 'error:%' OR r::jsonb->>'outcome' <> 'ok');
  END IF;
  ASSERT (SELECT available FROM members WHERE club_id = v_club AND external_id = 'm0') = v_before + 400,
    format('m0 has %s, expected %s', (SELECT available FROM members WHERE club_id = v_club AND external_id = 'm0'), v_before + 400);
  ASSERT (SELECT count(*) FROM ledger_entries e JOIN members m USING (member_id)
          WHERE m.club_id = v_club AND m.external_id = 'm0') = v_entries + 100, 'one entry per change';
  ASSERT (SELECT bool_and(reversed_amount = 1000 AND reversed_points = 10) AND count(*) = 20 FROM transactions
          WHERE club_id = v_club AND external_id LIKE 'b-%'), 'each first award reversed exactly, in two halves';
  ASSERT mr_pool_total(v_club) = v_pool - 400, 'pool moved by exactly the net award';
  ASSERT (SELECT count(DISTINCT created_ms) = count(*) FROM ledger_entries e JOIN members m USING (member_id)
          WHERE m.club_id = v_club AND m.external_id = 'm0'), 'createdAt unique per member';

  -- Whatever interleaving happened, the books balance.
  ASSERT NOT EXISTS (SELECT 1 FROM mr_audit() a WHERE a LIKE '%club ' || v_ref || '%'),
    (SELECT string_agg(a, '; ') FROM mr_audit() a WHERE a LIKE '%club ' || v_ref || '%');
END $$;
