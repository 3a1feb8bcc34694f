-- Delivery of an endpoint's queue stops while it is disabled and resumes
-- when it is enabled again.
CREATE OR REPLACE FUNCTION mr_webhook_set_status(p_endpoint_id text, p_status text, p_reason text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE webhook_endpoints
  SET status = p_status, disabled_reason = CASE WHEN p_status = 'disabled' THEN p_reason END,
      failing_since = CASE WHEN p_status = 'enabled' THEN NULL ELSE failing_since END,
      updated_at = clock_timestamp()
  WHERE endpoint_id = p_endpoint_id;
  IF p_status = 'enabled' THEN
    UPDATE webhook_deliveries SET state = 'pending', next_at = now()
    WHERE endpoint_id = p_endpoint_id AND state = 'paused';
    IF FOUND THEN PERFORM pg_notify('mr_webhooks', ''); END IF;
  ELSE
    UPDATE webhook_deliveries SET state = CASE WHEN p_status = 'deleted' THEN 'cancelled' ELSE 'paused' END
    WHERE endpoint_id = p_endpoint_id AND state IN ('pending', 'paused');
  END IF;
END $function$;
