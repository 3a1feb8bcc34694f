CREATE OR REPLACE FUNCTION mr_capacity_topup(p_ref text, p_minor bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM mr_refuse_moving_ref(p_ref);
  RETURN mr_capacity_topup_unpaused(p_ref, p_minor);
END $function$;
