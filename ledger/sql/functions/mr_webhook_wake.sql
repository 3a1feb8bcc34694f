-- Instead of pg_notify('mr_webhooks', '') after queueing a delivery.
CREATE OR REPLACE FUNCTION mr_webhook_wake()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhook_pollers WHERE until > clock_timestamp() + interval '500 ms') THEN
    PERFORM pg_notify('mr_webhooks', '');
  END IF;
END $function$;
