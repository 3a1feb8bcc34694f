CREATE OR REPLACE FUNCTION mr_pool_topup(p_ref text, p_points bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM mr_refuse_moving_ref(p_ref);
  RETURN mr_pool_topup_unpaused(p_ref, p_points);
END $function$;
