CREATE OR REPLACE FUNCTION mr_filter_types(p_filter text)
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT CASE p_filter
    WHEN 'earned' THEN ARRAY['earn_award']
    WHEN 'reversed' THEN ARRAY['earn_reversal']
    WHEN 'reserved' THEN ARRAY['redeem_reserve']
    WHEN 'redeemed' THEN ARRAY['redeem_burn']
    WHEN 'released' THEN ARRAY['redeem_release']
    WHEN 'adjusted' THEN ARRAY['close_forfeit', 'manual_adjustment']
    ELSE NULL END
$function$;
