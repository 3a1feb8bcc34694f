-- The ledger's tables: members, wallets, settled and reversed transactions,
-- append-only entries, idempotency records and the club's points pool in
-- stripes. Every points change is one call of mr_write (one statement, one
-- transaction; ledger/sql/functions/). Lock order everywhere: idempotency
-- record, member row, transaction row, then pool stripes in ascending order.

ALTER TABLE clubs
  ADD COLUMN funded_points bigint NOT NULL DEFAULT 0 CHECK (funded_points >= 0),
  ADD COLUMN burned_points bigint NOT NULL DEFAULT 0 CHECK (burned_points >= 0),
  ADD COLUMN cash_capacity_minor bigint NOT NULL DEFAULT 0 CHECK (cash_capacity_minor >= 0);

-- The points pool, split so that awards for different members do not queue
-- on one row: a member draws from stripe member_id % 16; only when that
-- stripe cannot cover an award are all stripes locked (in order) and
-- rebalanced, and the award is refused only if their sum cannot cover it.
CREATE TABLE club_pool_stripes (
  club_id bigint NOT NULL REFERENCES clubs,
  stripe  smallint NOT NULL CHECK (stripe BETWEEN 0 AND 15),
  points  bigint NOT NULL DEFAULT 0 CHECK (points >= 0),
  PRIMARY KEY (club_id, stripe)
);
INSERT INTO club_pool_stripes (club_id, stripe) SELECT club_id, s FROM clubs, generate_series(0, 15) s;

CREATE TABLE members (
  member_id         bigserial PRIMARY KEY,
  club_id           bigint NOT NULL REFERENCES clubs,
  external_id       text NOT NULL,
  first_name        text NOT NULL,
  last_name         text NOT NULL,
  email             text NOT NULL,
  status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'closed')),
  closed_at         timestamptz,
  available         bigint NOT NULL DEFAULT 0,   -- caches of the entries' sums,
  reserved          bigint NOT NULL DEFAULT 0 CHECK (reserved >= 0),  -- checked by mr_audit
  lifetime_earned   bigint NOT NULL DEFAULT 0,
  lifetime_redeemed bigint NOT NULL DEFAULT 0,
  last_entry_ms     bigint NOT NULL DEFAULT 0,   -- createdAt of the newest entry
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (club_id, external_id)
);

CREATE TABLE wallets (
  member_id      bigint PRIMARY KEY REFERENCES members,
  provider       text,
  wallet_ref     text,
  status         text,
  account_number text,
  sort_code      text,
  account_name   text,
  updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE transactions (
  tx_id           bigserial PRIMARY KEY,
  club_id         bigint NOT NULL REFERENCES clubs,
  member_id       bigint NOT NULL REFERENCES members,
  external_id     text NOT NULL,
  event_id        text NOT NULL,
  merchant_id     text NOT NULL,
  merchant_name   text NOT NULL,
  amount_minor    bigint NOT NULL CHECK (amount_minor > 0),
  currency        char(3) NOT NULL,
  rate_bp         integer NOT NULL,              -- the earn rate in force
  points          bigint NOT NULL CHECK (points >= 0),
  occurred_at     timestamptz NOT NULL,
  settled_at      timestamptz NOT NULL,
  reversed_amount bigint NOT NULL DEFAULT 0 CHECK (reversed_amount BETWEEN 0 AND amount_minor),
  reversed_points bigint NOT NULL DEFAULT 0 CHECK (reversed_points BETWEEN 0 AND points),
  created_ms      bigint NOT NULL,
  UNIQUE (club_id, external_id)
);
CREATE INDEX transactions_member ON transactions (member_id, created_ms DESC);

CREATE TABLE reversals (
  reversal_id  bigserial PRIMARY KEY,
  tx_id        bigint NOT NULL REFERENCES transactions,
  member_id    bigint NOT NULL REFERENCES members,
  event_id     text NOT NULL,
  amount_minor bigint NOT NULL CHECK (amount_minor > 0),
  points       bigint NOT NULL CHECK (points >= 0),
  reason       text,
  occurred_at  timestamptz NOT NULL,
  created_ms   bigint NOT NULL
);
CREATE INDEX reversals_member ON reversals (member_id, created_ms DESC);

CREATE TABLE ledger_entries (
  entry_id         text PRIMARY KEY,
  member_id        bigint NOT NULL REFERENCES members,
  club_id          bigint NOT NULL REFERENCES clubs,
  entry_type       text NOT NULL CHECK (entry_type IN ('earn_award', 'earn_reversal', 'redeem_reserve',
                     'redeem_burn', 'redeem_release', 'close_forfeit', 'manual_adjustment')),
  description      text NOT NULL,
  delta_available  bigint NOT NULL,
  delta_reserved   bigint NOT NULL,
  cash_value_minor bigint,
  currency         char(3),
  merchant_name    text,
  merchant_id      text,
  external_tx_id   text,
  group_ref        text NOT NULL,   -- externalTransactionId or redemptionId
  created_ms       bigint NOT NULL,
  UNIQUE (member_id, created_ms)
);
CREATE INDEX ledger_entries_member ON ledger_entries (member_id, created_ms DESC);

CREATE TABLE idempotency_records (
  club_id     bigint NOT NULL REFERENCES clubs,
  idem_key    text NOT NULL,
  fingerprint text NOT NULL,
  result      jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (club_id, idem_key)
);
CREATE INDEX idempotency_records_age ON idempotency_records (created_at);
