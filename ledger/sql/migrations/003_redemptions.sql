-- Redemptions and payouts (contract section 7). Points are reserved at
-- once and burned only when the payout succeeds; a failed payout gives
-- points and cash capacity back (mr_do_redeem, mr_payout_move_decide).

CREATE TABLE redemptions (
  redemption_id    text PRIMARY KEY,
  club_id          bigint NOT NULL REFERENCES clubs,
  member_id        bigint NOT NULL REFERENCES members,
  request_id       text NOT NULL,
  points           bigint NOT NULL CHECK (points > 0),
  cash_value_minor bigint NOT NULL CHECK (cash_value_minor > 0),
  currency         char(3) NOT NULL,
  status           text NOT NULL DEFAULT 'payout_pending' CHECK (status IN ('payout_pending', 'completed', 'failed')),
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (club_id, request_id)
);
CREATE INDEX redemptions_member_pending ON redemptions (member_id) WHERE status = 'payout_pending';

CREATE TABLE payouts (
  payout_id      text PRIMARY KEY,
  redemption_id  text NOT NULL UNIQUE REFERENCES redemptions,
  club_id        bigint NOT NULL REFERENCES clubs,
  status         text NOT NULL DEFAULT 'created' CHECK (status IN ('created', 'submitted', 'succeeded', 'failed')),
  failure_reason text,
  account_number text NOT NULL,
  sort_code      text NOT NULL,
  account_name   text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX payouts_status ON payouts (status, created_at);
