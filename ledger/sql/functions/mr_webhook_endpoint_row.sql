-- A live endpoint of the club, locked: NULL when unknown, deleted or another club's.
CREATE OR REPLACE FUNCTION mr_webhook_endpoint_row(p_club_id bigint, p_endpoint_id text)
 RETURNS webhook_endpoints
 LANGUAGE sql
AS $function$
  SELECT * FROM webhook_endpoints
  WHERE endpoint_id = p_endpoint_id AND club_id = p_club_id AND status <> 'deleted' FOR UPDATE
$function$;
