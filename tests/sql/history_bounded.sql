-- History reads that do not grow with the history (mr_points_rows,
-- mr_points_rows_filtered, mr_transactions_rows). A member with 100,001 entries (80,000 awards, 20,000 full
-- reversals, one adjustment, written straight into the tables, books
-- consistent) and one with 11: the first and the oldest page of /points
-- (unfiltered and filtered) and of /transactions, as the API reads them
-- (the row reads, prepared with parameters like the pool's statements,
-- under the custom plans of the first executions and the generic plan
-- kept after), read a bounded number of blocks, within 2x of the small
-- member's same page, with stale and with fresh statistics. The first
-- definitions fail here (their /transactions first page turns every row
-- of the history into jsonb). Every page of the jsonb mr_points /
-- mr_transactions (kept for modules of the release before, built on the
-- same reads) equals what the first definitions return on the same data (byte
-- for byte as text): first, oldest, and every page of a walk. (The
-- module's rendering of the rows is compared with the jsonb answers by
-- tests/integration/history_compare_test.cpp.) Rolled back at the end.

-- The unbounded first definitions, as pg_temp.old_*.
\ir include/history_unbounded.sql

-- A member with p_groups * 5 + 1 entries: an adjustment at p_base_ms, then
-- per group four awards and a full reversal of the group's first award, at
-- consecutive milliseconds. Caches and the club's funded points follow.
-- Every row is computed from its number (award k, amount and points
-- 100 + k % 900), not joined: the planner knows nothing of uncommitted rows.
-- Foreign keys hold by construction: their per-row checks are skipped
-- (replica role, this transaction only).
CREATE FUNCTION pg_temp.seed(p_club bigint, p_member text, p_groups int, p_base_ms bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_member bigint;
  v_avail bigint;
  v_earned bigint;
BEGIN
  PERFORM set_config('session_replication_role', 'replica', true);
  INSERT INTO members (club_id, external_id, first_name, last_name, email)
  VALUES (p_club, p_member, 'A', 'B', 'a@b.c') RETURNING member_id INTO v_member;
  CREATE TEMP TABLE seed_awards ON COMMIT DROP AS
  SELECT k, p_member || '-tx-' || k AS ext, 'shop-' || k % 7 AS shop_id, 'Shop ' || k % 7 AS shop,
         100 + k % 900 AS amount, k % 4 = 1 AS reversed, p_base_ms + 5 * ((k - 1) / 4) + (k - 1) % 4 + 1 AS ms,
         timestamptz '2026-01-01' + k * interval '1.5 second' AS occurred
  FROM generate_series(1, 4 * p_groups) k;
  INSERT INTO transactions (club_id, member_id, external_id, event_id, merchant_id, merchant_name, amount_minor,
                            currency, rate_bp, points, occurred_at, settled_at, reversed_amount, reversed_points,
                            created_ms)
  SELECT p_club, v_member, ext, 'ev-' || k, shop_id, shop, amount, 'GBP', 10000, amount, occurred,
         timestamptz '2026-01-02' + k * interval '1 second', CASE WHEN reversed THEN amount ELSE 0 END,
         CASE WHEN reversed THEN amount ELSE 0 END, ms
  FROM seed_awards;
  INSERT INTO reversals (tx_id, member_id, event_id, amount_minor, points, reason, occurred_at, created_ms)
  SELECT (SELECT tx_id FROM transactions WHERE club_id = p_club AND external_id = ext), v_member, 'rev-' || ext,
         amount, amount, NULL, occurred + interval '1 day', ms + 4
  FROM seed_awards WHERE reversed;
  INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available, delta_reserved,
                              cash_value_minor, currency, merchant_name, merchant_id, external_tx_id, group_ref,
                              created_ms)
  SELECT 'le_' || lpad(to_hex(p_base_ms), 12, '0') || lpad(to_hex(v_member), 12, '0'), v_member, p_club,
         'manual_adjustment', 'goodwill', 7, 0, NULL::bigint, 'GBP', NULL, NULL, NULL, 'adjustment', p_base_ms
  UNION ALL
  SELECT 'le_' || lpad(to_hex(ms), 12, '0') || lpad(to_hex(v_member), 12, '0'), v_member, p_club, 'earn_award',
         'Points for ' || shop, amount, 0, NULL, 'GBP', shop, shop_id, ext, ext, ms
  FROM seed_awards
  UNION ALL
  SELECT 'le_' || lpad(to_hex(ms + 4), 12, '0') || lpad(to_hex(v_member), 12, '0'), v_member, p_club, 'earn_reversal',
         'Reversal at ' || shop, -amount, 0, NULL, 'GBP', shop, shop_id, ext, ext, ms + 4
  FROM seed_awards WHERE reversed;
  SELECT 7 + sum(amount) FILTER (WHERE NOT reversed), sum(amount) FILTER (WHERE NOT reversed)
    INTO v_avail, v_earned FROM seed_awards;
  DROP TABLE seed_awards;
  UPDATE members SET available = v_avail, lifetime_earned = v_earned, last_entry_ms = p_base_ms + 5 * p_groups
  WHERE member_id = v_member;
  UPDATE clubs SET funded_points = funded_points + v_avail WHERE club_id = p_club;
  PERFORM set_config('session_replication_role', 'origin', true);
  RETURN v_member;
END $$;

-- Blocks (shared-buffer hits and reads) of the ledger's tables and their
-- indexes fetched so far in this transaction.
CREATE FUNCTION pg_temp.blocks() RETURNS bigint LANGUAGE sql AS $$
  SELECT sum(pg_stat_get_xact_blocks_fetched(c.oid))::bigint FROM pg_class c
  WHERE c.oid IN ('ledger_entries'::regclass, 'transactions'::regclass, 'reversals'::regclass, 'members'::regclass)
     OR c.oid IN (SELECT indexrelid FROM pg_index
                  WHERE indrelid IN ('ledger_entries'::regclass, 'transactions'::regclass, 'reversals'::regclass,
                                     'members'::regclass))
$$;

-- Blocks one read costs (its rows fetched). It runs 7 times first: a
-- prepared statement gets plans for its first five executions' arguments,
-- then may keep a generic one.
CREATE FUNCTION pg_temp.cost(p_sql text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_before bigint;
  r record;
BEGIN
  FOR i IN 1..7 LOOP FOR r IN EXECUTE p_sql LOOP END LOOP; END LOOP;
  v_before := pg_temp.blocks();
  FOR r IN EXECUTE p_sql LOOP END LOOP;
  RETURN pg_temp.blocks() - v_before;
END $$;

-- The reads as the pool sends them: prepared, with parameters.
PREPARE h_points (bigint, text, int, bigint) AS SELECT * FROM mr_points_rows($1, $2, $3, $4);
PREPARE h_filtered (bigint, text, text, int, bigint) AS SELECT * FROM mr_points_rows_filtered($1, $2, $3, $4, $5);
PREPARE h_transactions (bigint, text, int, bigint) AS SELECT * FROM mr_transactions_rows($1, $2, $3, $4);

-- Pages through one history with the kept mr_points / mr_transactions and
-- the first definition side by side: every page equal as text, nextBefore the
-- last createdAt, null at the end. Returns the number of entries seen.
CREATE FUNCTION pg_temp.walk_equal(p_club bigint, p_member text, p_limit int, p_filter text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  v_before bigint;
  v_new jsonb;
  v_old jsonb;
  v_seen int := 0;
BEGIN
  LOOP
    IF p_filter = 'transactions' THEN
      v_new := mr_transactions(p_club, p_member, p_limit, v_before, 'req');
      v_old := pg_temp.old_transactions(p_club, p_member, p_limit, v_before, 'req');
    ELSE
      v_new := mr_points(p_club, p_member, p_filter, p_limit, v_before, 'req');
      v_old := pg_temp.old_points(p_club, p_member, p_filter, p_limit, v_before, 'req');
    END IF;
    IF v_new::text <> v_old::text THEN
      RAISE EXCEPTION '% % limit % before %: % <> %', p_member, p_filter, p_limit, v_before, v_new, v_old;
    END IF;
    v_seen := v_seen + jsonb_array_length(v_new->'data'->'entries');
    EXIT WHEN v_new->'data'->'nextBefore' = 'null'::jsonb;
    ASSERT v_new->'data'->>'nextBefore' = (extract(epoch FROM (v_new->'data'->'entries'->-1->>'createdAt')::timestamptz)
                                           * 1000)::bigint::text, 'nextBefore is the last createdAt';
    v_before := (v_new->'data'->>'nextBefore')::bigint;
  END LOOP;
  RETURN v_seen;
END $$;

-- Each read of the big member within 2x of the small member's same read,
-- and below a fixed bound (a page of 10 reads at most 11 rows per source,
-- each a few index and heap blocks); under the plans the first executions
-- get and under the generic plan.
CREATE FUNCTION pg_temp.check_costs(p_club bigint, p_oldest bigint, p_stats text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_read text;
  v_mode text;
  v_small bigint;
  v_big bigint;
BEGIN
  FOREACH v_mode IN ARRAY ARRAY['force_custom_plan', 'force_generic_plan'] LOOP
    PERFORM set_config('plan_cache_mode', v_mode, true);
    FOREACH v_read IN ARRAY ARRAY[
      'points first|EXECUTE h_points(%s, %L, 10, NULL)',
      'points oldest|EXECUTE h_points(%s, %L, 10, ' || p_oldest || ')',
      'points adjusted first|EXECUTE h_filtered(%s, %L, ''adjusted'', 10, NULL)',
      'points reversed first|EXECUTE h_filtered(%s, %L, ''reversed'', 10, NULL)',
      'points earned oldest|EXECUTE h_filtered(%s, %L, ''earned'', 10, ' || p_oldest || ')',
      'transactions first|EXECUTE h_transactions(%s, %L, 10, NULL)',
      'transactions oldest|EXECUTE h_transactions(%s, %L, 10, ' || p_oldest || ')'] LOOP
      v_small := pg_temp.cost(format(split_part(v_read, '|', 2), p_club, 'small'));
      v_big := pg_temp.cost(format(split_part(v_read, '|', 2), p_club, 'big'));
      RAISE NOTICE '% (%, %): % blocks for 11 entries, % for 100,001', split_part(v_read, '|', 1), p_stats, v_mode,
        v_small, v_big;
      IF v_big > 2 * v_small OR v_big > 100 THEN
        RAISE EXCEPTION '% (%, %): % blocks for 100,001 entries, % for 11', split_part(v_read, '|', 1), p_stats,
          v_mode, v_big, v_small;
      END IF;
    END LOOP;
  END LOOP;
  PERFORM set_config('plan_cache_mode', 'auto', true);
END $$;

DO $$
DECLARE
  v_ref text := 'sql-bounded-' || txid_current();
  v_club bigint;
  v_base constant bigint := 1790000000000;  -- 2026-09-21
  v_big_oldest constant bigint := 1790000000010;  -- below it: each member's oldest 10 entries
  v_read text;
  v_old_big bigint;
  r jsonb;
BEGIN
  INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) VALUES (v_ref, 'B', 10000, '{GBP}')
  RETURNING club_id INTO v_club;
  PERFORM pg_temp.seed(v_club, 'big', 20000, v_base);
  PERFORM pg_temp.seed(v_club, 'small', 2, v_base);
  PERFORM pg_temp.seed(v_club, 'mid', 60, v_base);
  ASSERT (SELECT count(*) FROM ledger_entries e JOIN members m USING (member_id)
          WHERE m.club_id = v_club AND m.external_id = 'big') = 100001, 'big member seeded';
  -- Bounded with the statistics of before the seeding (the rows are not
  -- committed, nothing analysed them), then with statistics that know them.
  PERFORM pg_temp.check_costs(v_club, v_big_oldest, 'stale statistics');
  ANALYZE members, transactions, reversals, ledger_entries;
  PERFORM pg_temp.check_costs(v_club, v_big_oldest, 'fresh statistics');
  ASSERT (SELECT count(*) FROM mr_audit_club(v_club)) = 0, 'the seeded books balance';
  -- The test can fail: the first definition's /transactions first page reads the whole history.
  v_old_big := pg_temp.cost(format('SELECT pg_temp.old_transactions(%s, %L, 10, NULL, ''r'')', v_club, 'mid'));
  ASSERT v_old_big > 2 * pg_temp.cost(format('EXECUTE h_transactions(%s, %L, 10, NULL)', v_club, 'mid')),
    format('004 reads %s blocks for 301 entries', v_old_big);

  -- Same pages as 004: first and oldest pages of the big member (where 004
  -- is cheap enough to ask), limits 1, 10, 50, 100.
  FOREACH v_read IN ARRAY ARRAY['all', 'earned', 'reversed', 'adjusted'] LOOP
    FOR i IN 1..4 LOOP
      r := mr_points(v_club, 'big', v_read, (ARRAY[1, 10, 50, 100])[i], v_big_oldest + 40, 'req');
      ASSERT r::text = pg_temp.old_points(v_club, 'big', v_read, (ARRAY[1, 10, 50, 100])[i], v_big_oldest + 40, 'req')::text,
        format('big %s oldest page: %s', v_read, r);
    END LOOP;
  END LOOP;
  FOR i IN 1..4 LOOP
    r := mr_points(v_club, 'big', 'all', (ARRAY[1, 10, 50, 100])[i], NULL, 'req');
    ASSERT r::text = pg_temp.old_points(v_club, 'big', 'all', (ARRAY[1, 10, 50, 100])[i], NULL, 'req')::text, r::text;
    r := mr_transactions(v_club, 'big', (ARRAY[1, 10, 50, 100])[i], v_big_oldest + 40, 'req');
    ASSERT r::text = pg_temp.old_transactions(v_club, 'big', (ARRAY[1, 10, 50, 100])[i], v_big_oldest + 40, 'req')::text,
      r::text;
  END LOOP;
  -- The oldest page of 10 holds the adjustment last and has no extra row
  -- (nextBefore null).
  ASSERT (SELECT array_agg(entry_type ORDER BY created_ms DESC) FROM mr_points_rows(v_club, 'big', 10, v_big_oldest))
    = array_fill('earn_award'::text, ARRAY[4]) || 'earn_reversal'::text || array_fill('earn_award'::text, ARRAY[4])
      || 'manual_adjustment'::text,
    (SELECT array_agg(entry_type)::text FROM mr_points_rows(v_club, 'big', 10, v_big_oldest));
  -- The first page of the big member's transactions: its newest reversal
  -- (of award 80,000 - 3), then awards 80,000 down to 79,998, and the extra
  -- row; nextBefore is the fourth row's createdAt.
  ASSERT (SELECT array_agg((CASE WHEN reversed THEN 'reversed:' ELSE 'settled:' END) || external_id
                           ORDER BY created_ms DESC)
          FROM mr_transactions_rows(v_club, 'big', 4, NULL))
    = ARRAY['reversed:big-tx-79997', 'settled:big-tx-80000', 'settled:big-tx-79999', 'settled:big-tx-79998',
            'settled:big-tx-79997'],
    (SELECT array_agg(external_id)::text FROM mr_transactions_rows(v_club, 'big', 4, NULL));
  ASSERT (SELECT created_ms FROM mr_transactions_rows(v_club, 'big', 4, NULL) ORDER BY created_ms DESC
          OFFSET 3 LIMIT 1) = v_base + 99997;
  r := mr_transactions(v_club, 'big', 4, NULL, 'req')->'data';
  ASSERT r->>'nextBefore' = (v_base + 99997)::text, r::text;

  -- Every page of whole walks, new against old, on the small and a
  -- 301-entry member: every filter, limits that divide the history and not.
  FOREACH v_read IN ARRAY ARRAY['small:1', 'small:7', 'small:50', 'mid:7', 'mid:100'] LOOP
    PERFORM pg_temp.walk_equal(v_club, split_part(v_read, ':', 1), split_part(v_read, ':', 2)::int, f)
    FROM unnest(ARRAY['all', 'earned', 'reversed', 'reserved', 'redeemed', 'released', 'adjusted',
                      'transactions']) f;
  END LOOP;
  ASSERT pg_temp.walk_equal(v_club, 'mid', 60, 'all') = 301 AND pg_temp.walk_equal(v_club, 'mid', 60, 'transactions') = 300
    AND pg_temp.walk_equal(v_club, 'mid', 20, 'reversed') = 60 AND pg_temp.walk_equal(v_club, 'mid', 1, 'adjusted') = 1,
    'whole histories paged';
  RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'rollback';
EXCEPTION WHEN raise_exception THEN
  IF SQLERRM <> 'rollback' THEN RAISE; END IF;
END $$;
