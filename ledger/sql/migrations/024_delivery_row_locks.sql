-- A delivery without foreign-key row locks (issue 26, the settle ratio with
-- an endpoint). Each foreign key check locks the referenced row FOR KEY
-- SHARE: a settle that queued a delivery locked its own new event row (one
-- more heap write and WAL record in the write path), and every attempt's
-- report locked the event row again, by then committed and cold, so each
-- delivery dirtied an event page and wrote a lock record beside its own
-- rows. 021 dropped the delivery's endpoint check for the same reason; the
-- rest go now. The references hold without the checks:
--   * a delivery's and an attempt's event_no come from the events row read
--     or written in the same statement (mr_emit, the settle batch,
--     mr_webhook_replay, the reports reading the delivery's own event_no);
--   * an attempt's endpoint_id is its delivery's, whose endpoint row the
--     report holds FOR UPDATE; endpoint rows are never deleted (a delete is
--     status 'deleted') except by a club's move, which deletes the club's
--     attempts and deliveries first (020, 022);
--   * events go only through mr_events_prune below and a club's move: the
--     cascades the checks gave the prune are now its own statements.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_no_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_event_no_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_endpoint_id_fkey;

-- 014's prune, deleting the pruned events' deliveries and attempts itself,
-- each as one join (the cascades ran one scan of the referencing table per
-- deleted event: neither table has an index on event_no alone). Deliveries
-- first: deleting one waits for a report in flight, and the attempts'
-- statement, with a snapshot taken after, then sees that report's attempt;
-- a report after the delete finds no delivery and records nothing.
CREATE OR REPLACE FUNCTION mr_events_prune(p_days int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_cutoff timestamptz := now() - p_days * interval '1 day';
  v_n bigint;
BEGIN
  DELETE FROM webhook_deliveries d USING events e WHERE e.event_no = d.event_no AND e.created_at < v_cutoff;
  DELETE FROM webhook_attempts a USING events e WHERE e.event_no = a.event_no AND e.created_at < v_cutoff;
  DELETE FROM events WHERE created_at < v_cutoff;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n;
END $$;
