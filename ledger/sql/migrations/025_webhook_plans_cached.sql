-- The claim and the report batch with kept plans (issue 26, what a
-- delivery costs PostgreSQL). perf on the backends under settles with an
-- endpoint put about a tenth of PostgreSQL's CPU in the planner
-- (bench/RESULTS.md, Events), from two places:
--
--   * mr_webhook_claim (014, 020) is a SQL function that is not inlined
--     (its WITH updates the deliveries), and PostgreSQL 15 plans such a
--     function's statement again at every call. As PL/pgSQL the same
--     statement is prepared once per connection and its plan kept.
--   * the report batch's statement set plan_cache_mode = force_custom_plan
--     for its transaction (bc1429c), so every statement of
--     mr_webhook_report_batch (014) was planned at every call: its joins
--     of the reports (read as 100 rows) to their deliveries had kept a
--     plan made while webhook_deliveries was small, a scan of every
--     delivery. Here each of those joins reads the deliveries by the
--     batch's own ids (an index condition any plan uses, so no plan can
--     read more than the batch), and the statement no longer sets
--     plan_cache_mode (ledger/statements.hpp).
--
-- Both bodies are the landed ones, read from the catalogue and changed
-- where said, rather than written out again: one text of each.
DO $$
DECLARE
  v_body text;
  -- Each edit: what the landed body says, and what it says now; each must
  -- match exactly once.
  v_edits text[][] := ARRAY[
    -- The failures' loop: each report's delivery by its key.
    ARRAY['LEFT JOIN webhook_deliveries w ON w.delivery_id = (x->>''d'')::bigint',
          'LEFT JOIN LATERAL (SELECT w0.endpoint_id FROM webhook_deliveries w0'
            || ' WHERE w0.delivery_id = (x->>''d'')::bigint LIMIT 1) w ON true'],
    -- The steady state: the deliveries of the batch's ids.
    ARRAY['JOIN webhook_deliveries dl ON dl.delivery_id = r.d',
          'JOIN webhook_deliveries dl ON dl.delivery_id = r.d AND dl.delivery_id = ANY (v_ids)'],
    ARRAY['FROM joined j WHERE dl.delivery_id = j.d AND j.live',
          'FROM joined j WHERE dl.delivery_id = j.d AND j.live AND dl.delivery_id = ANY (v_ids)']];
  i int;
BEGIN
  SELECT p.prosrc INTO STRICT v_body FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
  WHERE p.oid = 'mr_webhook_claim(text, integer, integer)'::regprocedure AND l.lanname = 'sql';
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION mr_webhook_claim(p_environment text, p_limit int, p_lease_ms int)
    RETURNS TABLE (delivery_id bigint, attempt int, endpoint_id text, url text, secrets_sealed text[],
                   event_id text, body text)
    LANGUAGE plpgsql VOLATILE AS %L$f$,
    -- The output columns are PL/pgSQL variables too: every name in the
    -- body means a column, as it did in SQL.
    E'#variable_conflict use_column\nBEGIN\n  RETURN QUERY' || rtrim(v_body, E' \n;') || E';\nEND');

  SELECT p.prosrc INTO STRICT v_body FROM pg_proc p
  WHERE p.oid = 'mr_webhook_report_batch(jsonb, integer[])'::regprocedure;
  FOR i IN 1 .. array_length(v_edits, 1) LOOP
    IF array_length(string_to_array(v_body, v_edits[i][1]), 1) <> 2 THEN
      RAISE EXCEPTION 'mr_webhook_report_batch: "%" is not in the body exactly once', v_edits[i][1];
    END IF;
    v_body := replace(v_body, v_edits[i][1], v_edits[i][2]);
  END LOOP;
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION mr_webhook_report_batch(p_reports jsonb, p_schedule_ms int[])
    RETURNS TABLE (delivery_id bigint, attempt int, next text)
    LANGUAGE plpgsql AS %L$f$, v_body);
END $$;
