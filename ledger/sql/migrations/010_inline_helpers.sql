-- The small LANGUAGE sql helpers that every answer goes through were
-- declared IMMUTABLE, but their bodies call STABLE functions (to_char and
-- jsonb_build_object are STABLE in PostgreSQL). The planner inlines a SQL
-- function only when its body is no more volatile than its label, so none
-- of these was ever inlined: each call site ran the function through
-- fmgr_sql, which parses, analyses and plans the body again at every
-- execution of the statement that calls it. A history page paid that three
-- times (mr_ms_text in its SELECT, mr_page and mr_ok in its RETURN): about
-- 410 µs per mr_points call, of which the page's own read and jsonb took
-- under half. Labelled STABLE, which is what they are, they are inlined:
-- 410 -> 218 µs per mr_points and 468 -> 253 µs per mr_transactions
-- (2,000 calls in one session, same machine). Bodies, results and every
-- answer's bytes are unchanged; nothing indexes these functions (no index
-- expression, constraint or generated column names them), so nothing
-- needed them IMMUTABLE.
ALTER FUNCTION mr_ms_text(bigint) STABLE;
ALTER FUNCTION mr_ts_text(timestamptz) STABLE;
ALTER FUNCTION mr_ok(text, text, jsonb) STABLE;
ALTER FUNCTION mr_fail(text, text, text) STABLE;
ALTER FUNCTION mr_page(jsonb, bigint[], int, text) STABLE;
