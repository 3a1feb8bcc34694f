-- Reversals are computed on the cumulative amount with the stored rate, so
-- partial reversals sum exactly to a full one.
CREATE OR REPLACE FUNCTION mr_reversal_points(p_cumulative bigint, p_rate_bp integer, p_already bigint)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE STRICT
AS $function$ SELECT mr_award_points(p_cumulative, p_rate_bp) - p_already $function$;
