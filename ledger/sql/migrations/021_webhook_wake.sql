-- Webhook wake-ups without a NOTIFY in every write (mr_emit,
-- mr_webhook_wake, mr_webhook_claim_awake). PostgreSQL serialises the
-- commits of notifying transactions, so a NOTIFY in every write that queued
-- a delivery took group commit away from settles. A worker whose claim took
-- deliveries promises to claim again every 50 ms for the next 2 s
-- (modules/webhooks/delivery_engine.cpp, kAwakeMs) and says so here:
-- webhook_pollers.until. Unlogged: a crash leaves no row, and then every
-- write notifies until a claim takes something again.

CREATE UNLOGGED TABLE webhook_pollers (
  one   boolean PRIMARY KEY DEFAULT true CHECK (one),
  until timestamptz NOT NULL
);
INSERT INTO webhook_pollers (until) VALUES ('-infinity');

INSERT INTO api_access (object, privilege) VALUES ('mr_webhook_claim_awake(text,integer,integer)', 'execute');

-- Settles no longer lock the endpoint row. The delivery's reference to its
-- endpoint was checked by a foreign key, which locks the referenced row
-- FOR KEY SHARE in the inserting transaction: every settle that queued a
-- delivery locked its club's endpoint row until it committed, and waited
-- for every report, which locks that row FOR UPDATE until its own commit
-- (fsync included). Under 32 settling connections the settles spent more
-- time waiting for reports than anything else (pg_stat_activity sampled:
-- Lock transactionid and tuple; bench/RESULTS.md, Events). The reference
-- holds without the check: an endpoint row is never deleted (a delete is
-- status 'deleted'), and every insert of a delivery takes the endpoint id
-- from the endpoint row it reads in the same statement (mr_emit,
-- mr_write_batch, mr_webhook_replay).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
