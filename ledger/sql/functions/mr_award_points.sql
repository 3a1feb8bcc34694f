-- Arithmetic: exact bigint (amount <= 10^12, rate <= 10^6, product < 9.2e18).
CREATE OR REPLACE FUNCTION mr_award_points(p_amount bigint, p_rate_bp integer)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE STRICT
AS $function$ SELECT (p_amount * p_rate_bp) / 10000 $function$;
