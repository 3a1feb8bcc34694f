-- mr_balances, mr_pool_total and mr_pool_give read or write a table, so
-- PostgreSQL cannot inline them (the expression-only helpers are inlined).
-- As LANGUAGE sql, each call site would run its body through fmgr_sql,
-- which parses, analyses and plans it again in every transaction: for a
-- primary-key read and a 16-row sum, a large part of a lone settle's time
-- in mr_write. PL/pgSQL keeps each statement's plan for the session. Same
-- statements, same results, same volatility as a sql function would give.
CREATE OR REPLACE FUNCTION mr_pool_total(p_club_id bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
  RETURN (SELECT coalesce(sum(points), 0)::bigint FROM club_pool_stripes WHERE club_id = p_club_id);
END $function$;
