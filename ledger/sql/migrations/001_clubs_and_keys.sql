-- Clubs (the spec's partners) and their API keys. Secrets are stored sealed
-- with AES-256-GCM under the master key; the database never holds them clear.
CREATE TABLE clubs (
  club_id               bigserial PRIMARY KEY,
  partner_ref           text NOT NULL UNIQUE,
  name                  text NOT NULL,
  earn_rate_bp          integer NOT NULL CHECK (earn_rate_bp BETWEEN 0 AND 1000000),
  redemption_rate_minor bigint CHECK (redemption_rate_minor >= 0),
  payout_currency       char(3),
  currencies            text[] NOT NULL,
  min_redemption_points bigint NOT NULL DEFAULT 1 CHECK (min_redemption_points >= 1),
  funding_restricted    boolean NOT NULL DEFAULT false,
  status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  key_id        text PRIMARY KEY,
  club_id       bigint NOT NULL REFERENCES clubs,
  environment   text NOT NULL CHECK (environment IN ('sandbox', 'production')),
  secret_sealed bytea NOT NULL,
  status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz
);
CREATE INDEX api_keys_active ON api_keys (club_id, environment) WHERE status = 'active';

