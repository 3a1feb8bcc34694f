CREATE OR REPLACE FUNCTION mr_refuse_moving_ref(p_ref text)
 RETURNS void
 LANGUAGE sql
 STABLE
AS $function$
  SELECT mr_refuse_moving(club_id) FROM clubs WHERE partner_ref = p_ref
$function$;
