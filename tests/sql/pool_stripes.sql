-- A connection draws from its own pool stripe (mr_pool_stripe, mr_pool_take):
-- while one connection's award is uncommitted, another connection's award,
-- and its batch, for members of the same club go through without waiting,
-- though by member (stripe member_id % 16) the members chosen here would
-- share the first award's stripe and wait for its commit.
-- Each connection's stripe, and only it, pays for that connection's awards.
-- Needs committed data (dblink), so it leaves one club with a unique ref and
-- consistent books behind.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;

-- Consecutive member ids: m0, m16 and m32 fell on one stripe under 002;
-- 1,000 points a stripe.
\set club_prefix sql-stripes
\set club_members 48
\set club_pool 16000
\ir include/test_club.sql

DO $$
DECLARE
  v_ref text := (SELECT ref FROM test_club);
  v_club bigint := (SELECT club FROM test_club);
  v_dsn text := format('host=%s port=%s dbname=%s user=%s',
                       coalesce(host(inet_server_addr()), split_part(current_setting('unix_socket_directories'), ',', 1)),
                       current_setting('port'), current_database(), current_user);
  v_a smallint;
  v_b smallint;
  v_before jsonb;
  v_after jsonb;
  v_result text;
  v_batch text[];
BEGIN
  ASSERT (SELECT count(DISTINCT member_id % 16) FROM members
          WHERE club_id = v_club AND external_id IN ('m0', 'm16', 'm32')) = 1, 'one stripe under 002';
  PERFORM dblink_connect('stripe_a', v_dsn);
  v_a := (SELECT s FROM dblink('stripe_a', 'SELECT mr_pool_stripe()') AS t(s smallint));
  -- Process ids are what pick stripes: reconnect until b's differs from a's
  -- (two connections on one stripe wait for each other, as two members of
  -- one stripe did before).
  FOR i IN 1..64 LOOP
    PERFORM dblink_connect('stripe_b', v_dsn);
    v_b := (SELECT s FROM dblink('stripe_b', 'SELECT mr_pool_stripe()') AS t(s smallint));
    EXIT WHEN v_b <> v_a;
    PERFORM dblink_disconnect('stripe_b');
  END LOOP;
  ASSERT v_b <> v_a, 'no second connection on another stripe';
  -- A parallel worker would compute its own process id's stripe.
  ASSERT (SELECT proparallel FROM pg_proc WHERE oid = 'mr_pool_stripe'::regproc) = 'r', 'mr_pool_stripe is parallel safe';
  SELECT jsonb_object_agg(stripe, points) INTO v_before FROM club_pool_stripes WHERE club_id = v_club;

  -- a: an award for m0, left uncommitted (its stripe row stays locked).
  PERFORM dblink_exec('stripe_a', 'BEGIN');
  v_result := (SELECT r FROM dblink('stripe_a', format('SELECT mr_write(%L, %s, %L, %L, %L, %L, %L::jsonb)::text',
    'settle', v_club, v_ref, 'k-a', 'f', 'req', pg_temp.settle_cmd('m0', 'tx-a'))) AS t(r text));
  ASSERT v_result::jsonb->>'outcome' = 'ok', 'a: ' || v_result;

  -- b: a lone award for m16 and a batch for m32 and m1, each its own
  -- transaction, neither allowed to wait for a lock.
  PERFORM dblink_exec('stripe_b', 'SET lock_timeout = ''2s''');
  BEGIN
    v_result := (SELECT r FROM dblink('stripe_b', format('SELECT mr_write(%L, %s, %L, %L, %L, %L, %L::jsonb)::text',
      'settle', v_club, v_ref, 'k-b', 'f', 'req', pg_temp.settle_cmd('m16', 'tx-b'))) AS t(r text));
    v_batch := ARRAY(SELECT r FROM dblink('stripe_b', format('SELECT mr_write_batch(%L::jsonb)::text', jsonb_build_array(
      jsonb_build_array('settle', v_club, v_ref, 'k-c', 'f', 'req', pg_temp.settle_cmd('m32', 'tx-c')),
      jsonb_build_array('settle', v_club, v_ref, 'k-d', 'f', 'req', pg_temp.settle_cmd('m1', 'tx-d'))))) AS t(r text));
  EXCEPTION WHEN OTHERS THEN
    RAISE EXCEPTION 'b waited on a''s stripe (a on %, b on %): %', v_a, v_b, SQLERRM;
  END;
  ASSERT v_result::jsonb->>'outcome' = 'ok', 'b alone: ' || v_result;
  ASSERT cardinality(v_batch) = 2 AND v_batch[1]::jsonb->>'outcome' = 'ok' AND v_batch[2]::jsonb->>'outcome' = 'ok',
    'b batch: ' || array_to_string(v_batch, ', ');

  PERFORM dblink_exec('stripe_a', 'COMMIT');
  PERFORM dblink_disconnect('stripe_a');
  PERFORM dblink_disconnect('stripe_b');

  -- 10 points an award: a's stripe paid one, b's three, no other moved.
  SELECT jsonb_object_agg(stripe, points) INTO v_after FROM club_pool_stripes WHERE club_id = v_club;
  ASSERT (v_before->>v_a::text)::bigint - (v_after->>v_a::text)::bigint = 10, format('a''s stripe: %s -> %s', v_before, v_after);
  ASSERT (v_before->>v_b::text)::bigint - (v_after->>v_b::text)::bigint = 30, format('b''s stripe: %s -> %s', v_before, v_after);
  ASSERT (SELECT count(*) FROM jsonb_each_text(v_after) a WHERE a.value <> v_before->>a.key) = 2,
    format('other stripes moved: %s -> %s', v_before, v_after);
  ASSERT mr_pool_total(v_club) = 16000 - 40, 'pool moved by the four awards';
  ASSERT NOT EXISTS (SELECT 1 FROM mr_audit() a WHERE a LIKE '%club ' || v_ref || '%'),
    (SELECT string_agg(a, '; ') FROM mr_audit() a WHERE a LIKE '%club ' || v_ref || '%');
END $$;
