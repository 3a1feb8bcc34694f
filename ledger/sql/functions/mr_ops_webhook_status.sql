CREATE OR REPLACE FUNCTION mr_ops_webhook_status(p_endpoint_id text, p_status text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
  PERFORM mr_refuse_moving(club_id) FROM webhook_endpoints WHERE endpoint_id = p_endpoint_id;
  RETURN mr_ops_webhook_status_unpaused(p_endpoint_id, p_status);
END $function$;
