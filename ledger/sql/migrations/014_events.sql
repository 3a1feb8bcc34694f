-- Events and webhooks (contract section 10; docs/events-design.md): the
-- outbox, the endpoints, the delivery queue and its attempts. Every
-- committed change writes its event in its own transaction, through
-- mr_emit() alone (ledger/sql/functions/).

ALTER TABLE members ADD COLUMN event_seq bigint NOT NULL DEFAULT 0;

CREATE TABLE events (
  event_no   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id   text NOT NULL UNIQUE,
  club_id    bigint NOT NULL REFERENCES clubs,
  -- The writing transaction: the events API lists only events whose
  -- transaction is older than every one still running (see mr_events).
  xid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
  type       text NOT NULL,
  data       jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX events_cursor ON events (club_id, xid, event_no);
CREATE INDEX events_age ON events (created_at);

CREATE TABLE webhook_endpoints (
  endpoint_id            text PRIMARY KEY,
  club_id                bigint NOT NULL REFERENCES clubs,
  url                    text NOT NULL,
  event_types            text[] NOT NULL DEFAULT '{}',  -- empty: every type
  description            text,
  status                 text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled', 'deleted')),
  disabled_reason        text CHECK (disabled_reason IN ('gone', 'failing', 'manual')),
  -- Secrets sealed by the modules under the master key (keys/webhook_secret):
  -- the database never sees one in clear.
  secret_sealed          text NOT NULL,
  previous_secret_sealed text,       -- signs beside the new one until
  previous_expires_at    timestamptz,  -- 24 h after a rotation
  failing_since          timestamptz,  -- first failed attempt since the last success
  last_attempt_ms        bigint NOT NULL DEFAULT 0,  -- attempts' strictly increasing times
  created_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at             timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_endpoints_enabled ON webhook_endpoints (club_id) WHERE status = 'enabled';

-- The queue: one row per event and endpoint (a replay adds another).
-- pending: to send at next_at; paused: its endpoint is disabled (re-enabling
-- makes it pending again); delivered, exhausted, cancelled (endpoint deleted).
CREATE TABLE webhook_deliveries (
  delivery_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints,
  club_id     bigint NOT NULL,
  event_no    bigint NOT NULL REFERENCES events ON DELETE CASCADE,
  state       text NOT NULL DEFAULT 'pending'
              CHECK (state IN ('pending', 'paused', 'delivered', 'exhausted', 'cancelled')),
  attempts    int NOT NULL DEFAULT 0,  -- claims so far: the claimed attempt's number
  next_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, event_no)
  WHERE state IN ('pending', 'paused');

CREATE TABLE webhook_attempts (
  endpoint_id  text NOT NULL REFERENCES webhook_endpoints,
  attempted_ms bigint NOT NULL,  -- strictly increasing per endpoint: `before` pages exactly
  event_no     bigint NOT NULL REFERENCES events ON DELETE CASCADE,
  attempt      int NOT NULL,
  status       int,   -- the HTTP status, or NULL when none came back
  error        text,  -- why, when it failed
  duration_ms  int NOT NULL,
  PRIMARY KEY (endpoint_id, attempted_ms)
);
