CREATE OR REPLACE FUNCTION mr_write_batch_unpaused(p_batch jsonb)
 RETURNS SETOF jsonb
 LANGUAGE sql
AS $function$SELECT mr_write_batch_events(p_batch)$function$;
-- Only through mr_write_batch, which refuses a moving club's settles first.
REVOKE EXECUTE ON FUNCTION mr_write_batch_unpaused(jsonb) FROM PUBLIC;
