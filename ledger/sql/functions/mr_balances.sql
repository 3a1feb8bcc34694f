CREATE OR REPLACE FUNCTION mr_balances(p_member_id bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
  RETURN (SELECT jsonb_build_object('pointsBalance', available, 'reservedPointsBalance', reserved)
          FROM members WHERE member_id = p_member_id);
END $function$;
