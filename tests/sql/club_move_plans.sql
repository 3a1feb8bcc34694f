-- The club move's export and summary reach a club's ledger entries and
-- payouts through indexes, not by a sequential scan of the pod's every
-- entry (the export's earlier text, by club_id, shown here as the contrast). Each
-- function's query is explained as it runs: its text with the club's id,
-- under the function's own settings. Rolled back at the end.
BEGIN;
INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies)
VALUES ('move-plans-' || txid_current(), 'Test', 100, '{GBP}') RETURNING club_id AS club \gset
SELECT set_config('test.club', :'club', true) IS NOT NULL AS club_set \gset

-- The plan of an SQL function's query for one club (its settings applied
-- for this transaction, as the call would).
CREATE FUNCTION pg_temp.plan_of(p_fn regprocedure, p_club bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_src text;
  v_cfg text[];
  v_set text;
  v_plan jsonb;
BEGIN
  SELECT prosrc, proconfig INTO v_src, v_cfg FROM pg_proc WHERE oid = p_fn;
  FOREACH v_set IN ARRAY coalesce(v_cfg, '{}') LOOP
    PERFORM set_config(split_part(v_set, '=', 1), split_part(v_set, '=', 2), true);
  END LOOP;
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || replace(v_src, 'p_club_id', p_club::text) INTO v_plan;
  PERFORM set_config('enable_seqscan', 'on', true);
  RETURN v_plan;
END $$;

CREATE FUNCTION pg_temp.seq_scans(p_plan jsonb) RETURNS text[] LANGUAGE sql AS $$
  SELECT coalesce(array_agg(DISTINCT n->>'Relation Name' ORDER BY n->>'Relation Name'), '{}')
  FROM jsonb_path_query(p_plan, 'lax $.** ? (@."Node Type" == "Seq Scan")') n
$$;

-- The export as it first was, reading entries and payouts by club_id, as
-- pg_temp.old_export.
\set earlier_fn mr_club_export
\set earlier_as old_export
\set earlier_edits '{{"FROM members m JOIN ledger_entries e ON e.member_id = m.member_id WHERE m.club_id = p_club_id", "FROM ledger_entries e WHERE club_id = p_club_id"}, {"FROM redemptions r JOIN payouts p ON p.redemption_id = r.redemption_id WHERE r.club_id = p_club_id", "FROM payouts p WHERE club_id = p_club_id"}}'
\ir include/earlier_function.sql

DO $$
DECLARE
  v_club bigint := current_setting('test.club')::bigint;
  v_plan jsonb;
  v_old text[];
  v_fn regprocedure;
  v_scans text[];
BEGIN
  -- The contrast: the earlier text, even with sequential scans discouraged.
  PERFORM set_config('enable_seqscan', 'off', true);
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || replace((SELECT prosrc FROM pg_proc WHERE oid = 'pg_temp.old_export(bigint)'::regprocedure),
                                              'p_club_id', v_club::text) INTO v_plan;
  PERFORM set_config('enable_seqscan', 'on', true);
  v_old := pg_temp.seq_scans(v_plan);
  ASSERT 'ledger_entries' = ANY (v_old) AND 'payouts' = ANY (v_old), format('the earlier export scans %s', v_old);

  FOREACH v_fn IN ARRAY ARRAY['mr_club_export(bigint)'::regprocedure, 'mr_club_summary(bigint)'::regprocedure] LOOP
    v_scans := pg_temp.seq_scans(pg_temp.plan_of(v_fn, v_club));
    ASSERT NOT ('ledger_entries' = ANY (v_scans)) AND NOT ('payouts' = ANY (v_scans)),
      format('%s scans %s sequentially', v_fn, v_scans);
    -- What is left: deliveries and endpoints (no index reaches all of a
    -- club's; endpoints are a few rows per club).
    ASSERT v_scans <@ ARRAY['webhook_deliveries', 'webhook_endpoints'], format('%s scans %s sequentially', v_fn, v_scans);
  END LOOP;
END $$;
ROLLBACK;
