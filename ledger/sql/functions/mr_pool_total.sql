-- mr_balances, mr_pool_total and mr_pool_give read or write a table, so
-- PostgreSQL cannot inline them (010 made the expression-only helpers
-- inline). As LANGUAGE sql, each call site ran its body through fmgr_sql,
-- which parses, analyses and plans it again in every transaction: under
-- settles at 8 connections (pg_stat_user_functions) mr_balances took 85 µs
-- and mr_pool_total 95 µs per call for a primary-key read and a 16-row sum,
-- inside a lone settle's 1.04 ms in mr_write. PL/pgSQL keeps each
-- statement's plan for the session. One connection settling, old and new
-- definitions swapped on one database three times: mr_balances 63-100 ->
-- 35-45 µs, mr_pool_total 76-113 -> 50-65 µs, mr_write 675-844 -> 597-743
-- µs per call. Same statements, same results, same volatility; every
-- caller is unchanged.
CREATE OR REPLACE FUNCTION mr_pool_total(p_club_id bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
  RETURN (SELECT coalesce(sum(points), 0)::bigint FROM club_pool_stripes WHERE club_id = p_club_id);
END $function$;
