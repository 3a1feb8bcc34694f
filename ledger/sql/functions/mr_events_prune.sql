-- Deletes the pruned events' deliveries and attempts itself, each as one
-- join (cascades would run one scan of the referencing table per deleted
-- event: neither table has an index on event_no alone). Deliveries first:
-- deleting one waits for a report in flight, and the attempts' statement,
-- with a snapshot taken after, then sees that report's attempt; a report
-- after the delete finds no delivery and records nothing.
CREATE OR REPLACE FUNCTION mr_events_prune(p_days integer)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_cutoff timestamptz := now() - p_days * interval '1 day';
  v_n bigint;
BEGIN
  DELETE FROM webhook_deliveries d USING events e WHERE e.event_no = d.event_no AND e.created_at < v_cutoff;
  DELETE FROM webhook_attempts a USING events e WHERE e.event_no = a.event_no AND e.created_at < v_cutoff;
  DELETE FROM events WHERE created_at < v_cutoff;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n;
END $function$;
