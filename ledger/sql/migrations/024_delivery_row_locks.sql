-- A delivery without foreign-key row locks. Each foreign key check locks
-- the referenced row FOR KEY SHARE: a settle that queued a delivery locked
-- its own new event row, and every attempt's report locked the event row
-- again, so each delivery dirtied an event page and wrote a lock record
-- beside its own rows. The references hold without the checks:
--   * a delivery's and an attempt's event_no come from the events row read
--     or written in the same statement (mr_emit, the settle batch,
--     mr_webhook_replay, the reports reading the delivery's own event_no);
--   * an attempt's endpoint_id is its delivery's, whose endpoint row the
--     report holds FOR UPDATE; endpoint rows are never deleted (a delete is
--     status 'deleted') except by a club's move, which deletes the club's
--     attempts and deliveries first (mr_club_purge);
--   * events go only through mr_events_prune and a club's move, which
--     delete their deliveries and attempts themselves.

ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_no_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_event_no_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_endpoint_id_fkey;
