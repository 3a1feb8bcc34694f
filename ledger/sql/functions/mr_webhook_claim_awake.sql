-- The claim the modules call: mr_webhook_claim's (014, 020), and when it
-- took deliveries the promise renewed (at most about twice a second: the
-- row is one for every worker, and it is locked only when it is renewed).
-- After a crash emptied the table, the row comes back.
CREATE OR REPLACE FUNCTION mr_webhook_claim_awake(p_environment text, p_limit integer, p_lease_ms integer)
 RETURNS TABLE(delivery_id bigint, attempt integer, endpoint_id text, url text, secrets_sealed text[], event_id text, body text)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
  RETURN QUERY SELECT * FROM mr_webhook_claim(p_environment, p_limit, p_lease_ms);
  IF FOUND THEN
    UPDATE webhook_pollers SET until = clock_timestamp() + interval '2 s'
    WHERE until < clock_timestamp() + interval '1500 ms';
    INSERT INTO webhook_pollers (until)
    SELECT clock_timestamp() + interval '2 s' WHERE NOT EXISTS (SELECT 1 FROM webhook_pollers)
    ON CONFLICT DO NOTHING;
  END IF;
END $function$;
