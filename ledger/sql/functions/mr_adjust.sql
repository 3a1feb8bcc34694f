CREATE OR REPLACE FUNCTION mr_adjust(p_ref text, p_member text, p_points bigint, p_reason text)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM mr_refuse_moving_ref(p_ref);
  RETURN mr_adjust_unpaused(p_ref, p_member, p_points, p_reason);
END $function$;
