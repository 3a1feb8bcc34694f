-- /metrics: deliveries waiting to be sent, and how long the oldest is overdue.
CREATE OR REPLACE FUNCTION mr_webhook_backlog()
 RETURNS TABLE(pending bigint, oldest_due_age_ms bigint)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT count(*), coalesce(max(mr_now_ms() - (extract(epoch FROM next_at) * 1000)::bigint), 0)
  FROM webhook_deliveries WHERE state = 'pending' AND next_at <= clock_timestamp()
$function$;
