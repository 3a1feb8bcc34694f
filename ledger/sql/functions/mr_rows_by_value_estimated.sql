-- Rows per value of a column, estimated as the planner does: the table's
-- estimated size times each most common value's frequency from the last
-- ANALYZE. Values missing from the list (or before any ANALYZE) give 0.
CREATE OR REPLACE FUNCTION mr_rows_by_value_estimated(p_table text, p_column text, p_values text[])
 RETURNS TABLE(value text, estimate bigint)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT v, coalesce((
    SELECT round(greatest(c.reltuples, 0) * u.f)::bigint
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = p_column
    CROSS JOIN LATERAL unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS u(val, f)
    WHERE c.oid = to_regclass(p_table) AND u.val = v), 0)
  FROM unnest(p_values) AS v
$function$;
