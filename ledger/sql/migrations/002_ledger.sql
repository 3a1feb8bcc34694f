-- The ledger: members, wallets, settled and reversed transactions,
-- append-only entries, idempotency records and the club's points pool in
-- stripes. Every points change is one call of mr_write (one statement, one
-- transaction). Lock order everywhere: idempotency record, member row,
-- transaction row, then pool stripes in ascending order.

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
CREATE FUNCTION mr_clubs_add_stripes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO club_pool_stripes (club_id, stripe) SELECT NEW.club_id, s FROM generate_series(0, 15) s;
  RETURN NEW;
END $$;
CREATE TRIGGER clubs_add_stripes AFTER INSERT ON clubs FOR EACH ROW EXECUTE FUNCTION mr_clubs_add_stripes();

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

-- Entries are the truth: never changed, never removed.
CREATE FUNCTION mr_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only';
END $$;
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION mr_entries_append_only();

CREATE TABLE idempotency_records (
  club_id     bigint NOT NULL REFERENCES clubs,
  idem_key    text NOT NULL,
  fingerprint text NOT NULL,
  result      jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (club_id, idem_key)
);
CREATE INDEX idempotency_records_age ON idempotency_records (created_at);

-- Arithmetic: exact bigint (amount <= 10^12, rate <= 10^6, product < 9.2e18).
CREATE FUNCTION mr_award_points(p_amount bigint, p_rate_bp integer) RETURNS bigint
  LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT (p_amount * p_rate_bp) / 10000 $$;

-- Reversals are computed on the cumulative amount with the stored rate, so
-- partial reversals sum exactly to a full one.
CREATE FUNCTION mr_reversal_points(p_cumulative bigint, p_rate_bp integer, p_already bigint) RETURNS bigint
  LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT mr_award_points(p_cumulative, p_rate_bp) - p_already $$;

CREATE FUNCTION mr_ms_text(p_ms bigint) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT to_char(timestamp 'epoch' + p_ms * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

CREATE FUNCTION mr_ts_text(p_ts timestamptz) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT to_char(p_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- Appends an entry and moves the member's caches with it: one update of
-- the member row takes the next createdAt, strictly increasing even within
-- one millisecond so the cursor pages without gaps or repeats, and applies
-- the deltas.
CREATE FUNCTION mr_add_entry(p_member_id bigint, p_club_id bigint, p_type text, p_description text,
                             p_available bigint, p_reserved bigint, p_cash bigint, p_currency text,
                             p_merchant_name text, p_merchant_id text, p_external_tx text, p_group text,
                             p_lifetime_earned bigint DEFAULT 0)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_ms bigint;
BEGIN
  UPDATE members SET last_entry_ms = greatest((extract(epoch FROM clock_timestamp()) * 1000)::bigint,
                                              last_entry_ms + 1),
                     available = available + p_available, reserved = reserved + p_reserved,
                     lifetime_earned = lifetime_earned + p_lifetime_earned, updated_at = now()
  WHERE member_id = p_member_id RETURNING last_entry_ms INTO v_ms;
  INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available,
                              delta_reserved, cash_value_minor, currency, merchant_name, merchant_id,
                              external_tx_id, group_ref, created_ms)
  VALUES ('le_' || lpad(to_hex(v_ms), 12, '0') || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12),
          p_member_id, p_club_id, p_type, p_description, p_available, p_reserved, p_cash, p_currency,
          p_merchant_name, p_merchant_id, p_external_tx, p_group, v_ms);
  RETURN v_ms;
END $$;

CREATE FUNCTION mr_pool_total(p_club_id bigint) RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(points), 0)::bigint FROM club_pool_stripes WHERE club_id = p_club_id
$$;

-- Takes points from the pool for a member; false when the whole pool
-- cannot cover them.
-- The fast path, UPDATE ... WHERE stripe = s AND points >= n, can fail and
-- still leave stripe s locked: under READ COMMITTED, when the row was changed
-- by a transaction that committed after our snapshot, PostgreSQL locks its
-- newest version to recheck the condition and keeps that lock even when the
-- recheck fails. The consolidation then locks stripes 0..15 while already
-- holding s, out of order, and two consolidating awards deadlock (measured:
-- 5-8 of 800 awards racing for a nearly empty pool failed with "deadlock
-- detected", bench/run_pgbench_pool.sh). Running the fast path in a
-- subtransaction and rolling it back when it takes nothing releases that
-- lock, so a consolidation starts holding no stripe and takes all of them in
-- ascending order. Cost: one subtransaction per award (within run-to-run
-- noise in the same benchmark, at most about 5 %).
CREATE FUNCTION mr_pool_take(p_club_id bigint, p_member_id bigint, p_points bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_total bigint;
  v_rest bigint;
BEGIN
  IF p_points = 0 THEN RETURN true; END IF;
  BEGIN
    UPDATE club_pool_stripes SET points = points - p_points
    WHERE club_id = p_club_id AND stripe = p_member_id % 16 AND points >= p_points;
    IF FOUND THEN RETURN true; END IF;
    RAISE EXCEPTION USING ERRCODE = 'MRP01';  -- undo the subtransaction: drop any lock it kept
  EXCEPTION WHEN SQLSTATE 'MRP01' THEN
    NULL;
  END;
  -- The member's stripe ran dry: holding no stripe now, lock every stripe
  -- in order, then spread what remains after the award evenly again.
  PERFORM 1 FROM club_pool_stripes WHERE club_id = p_club_id ORDER BY stripe FOR UPDATE;
  v_total := mr_pool_total(p_club_id);
  IF v_total < p_points THEN RETURN false; END IF;
  v_rest := v_total - p_points;
  UPDATE club_pool_stripes SET points = v_rest / 16 + CASE WHEN stripe < v_rest % 16 THEN 1 ELSE 0 END
  WHERE club_id = p_club_id;
  RETURN true;
END $$;

CREATE FUNCTION mr_pool_give(p_club_id bigint, p_member_id bigint, p_points bigint) RETURNS void
LANGUAGE sql AS $$
  UPDATE club_pool_stripes SET points = points + p_points
  WHERE club_id = p_club_id AND stripe = p_member_id % 16 AND p_points <> 0
$$;

CREATE FUNCTION mr_pool_topup(p_ref text, p_points bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_club bigint;
BEGIN
  IF p_points <= 0 THEN RAISE EXCEPTION 'points must be positive'; END IF;
  UPDATE clubs SET funded_points = funded_points + p_points, updated_at = now()
  WHERE partner_ref = p_ref RETURNING club_id INTO v_club;
  IF v_club IS NULL THEN RAISE EXCEPTION 'no club %', p_ref; END IF;
  PERFORM 1 FROM club_pool_stripes WHERE club_id = v_club ORDER BY stripe FOR UPDATE;
  UPDATE club_pool_stripes SET points = points + p_points / 16 + CASE WHEN stripe < p_points % 16 THEN 1 ELSE 0 END
  WHERE club_id = v_club;
  RETURN jsonb_build_object('partnerRef', p_ref, 'availablePointsPool', mr_pool_total(v_club));
END $$;

-- The operator's view of a club (mrctl club show).
CREATE FUNCTION mr_club_json(p_club_id bigint) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'clubId', c.club_id::text, 'partnerRef', c.partner_ref, 'name', c.name,
    'earnRateBasisPoints', c.earn_rate_bp, 'redemptionRateMinorPerPoint', c.redemption_rate_minor,
    'payoutCurrency', c.payout_currency, 'currencies', to_jsonb(c.currencies),
    'minRedemptionPoints', c.min_redemption_points, 'fundingRestricted', c.funding_restricted,
    'status', c.status, 'availablePointsPool', mr_pool_total(c.club_id),
    'fundedPoints', c.funded_points, 'burnedPoints', c.burned_points,
    'cashCapacityMinor', c.cash_capacity_minor)
  FROM clubs c WHERE c.club_id = p_club_id
$$;

CREATE FUNCTION mr_fail(p_code text, p_request_id text, p_message text DEFAULT NULL) RETURNS jsonb
  LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object('outcome', p_code, 'requestId', p_request_id, 'message', p_message))
$$;

CREATE FUNCTION mr_ok(p_outcome text, p_request_id text, p_data jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('outcome', p_outcome, 'requestId', p_request_id, 'data', p_data)
$$;

CREATE FUNCTION mr_balances(p_member_id bigint) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('pointsBalance', available, 'reservedPointsBalance', reserved)
  FROM members WHERE member_id = p_member_id
$$;

CREATE FUNCTION mr_payout_ready(p_member_id bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT account_number ~ '^[0-9]{8}$' AND sort_code ~ '^[0-9]{6}$'
                          AND coalesce(account_name, '') <> ''
                          AND coalesce(status, '') NOT IN ('suspended', 'closed')
                   FROM wallets WHERE member_id = p_member_id), false)
$$;

-- POST /api/v1/members
CREATE FUNCTION mr_do_member(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_member members%ROWTYPE;
  v_outcome text := 'created';
  v_wallet jsonb := p_cmd->'wallet';
BEGIN
  INSERT INTO members (club_id, external_id, first_name, last_name, email)
  VALUES (p_club_id, p_cmd->>'externalMemberId', p_cmd->>'firstName', p_cmd->>'lastName', p_cmd->>'email')
  ON CONFLICT (club_id, external_id) DO NOTHING
  RETURNING * INTO v_member;
  IF v_member.member_id IS NULL THEN
    v_outcome := 'updated';
    SELECT * INTO v_member FROM members
    WHERE club_id = p_club_id AND external_id = p_cmd->>'externalMemberId' FOR UPDATE;
    IF v_member.status = 'closed' THEN RETURN mr_fail('member_closed', p_request_id); END IF;
    UPDATE members SET first_name = p_cmd->>'firstName', last_name = p_cmd->>'lastName',
                       email = p_cmd->>'email', updated_at = now()
    WHERE member_id = v_member.member_id;
  END IF;
  IF v_wallet IS NOT NULL THEN
    INSERT INTO wallets (member_id, provider, wallet_ref, status, account_number, sort_code, account_name)
    VALUES (v_member.member_id, v_wallet->>'provider', v_wallet->>'walletRef', v_wallet->>'status',
            v_wallet->'bankAccount'->>'accountNumber', v_wallet->'bankAccount'->>'sortCode',
            v_wallet->'bankAccount'->>'name')
    ON CONFLICT (member_id) DO UPDATE SET provider = EXCLUDED.provider, wallet_ref = EXCLUDED.wallet_ref,
      status = EXCLUDED.status, account_number = EXCLUDED.account_number, sort_code = EXCLUDED.sort_code,
      account_name = EXCLUDED.account_name, updated_at = now();
  END IF;
  RETURN mr_ok(v_outcome, p_request_id, jsonb_build_object(
    'externalMemberId', v_member.external_id, 'status', v_outcome,
    'payoutReady', mr_payout_ready(v_member.member_id)));
END $$;

-- POST /api/v1/transactions/settled
CREATE FUNCTION mr_do_settle(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_club clubs%ROWTYPE;
  v_member members%ROWTYPE;
  v_points bigint;
  v_ms bigint;
  v_ext text := p_cmd->>'externalTransactionId';
BEGIN
  -- Read, never locked: the club row is not a hot row.
  SELECT * INTO v_club FROM clubs WHERE club_id = p_club_id;
  SELECT * INTO v_member FROM members
  WHERE club_id = p_club_id AND external_id = p_cmd->>'externalMemberId' FOR UPDATE;
  IF v_member.member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  IF v_member.status = 'closed' THEN RETURN mr_fail('member_closed', p_request_id); END IF;
  IF NOT (p_cmd->>'currency' = ANY (v_club.currencies)) THEN
    RETURN mr_fail('unsupported_currency', p_request_id,
                   'The club supports ' || array_to_string(v_club.currencies, ', ') || '.');
  END IF;
  IF EXISTS (SELECT 1 FROM transactions WHERE club_id = p_club_id AND external_id = v_ext) THEN
    RETURN mr_fail('duplicate_transaction', p_request_id);
  END IF;
  v_points := mr_award_points((p_cmd->>'amountMinor')::bigint, v_club.earn_rate_bp);
  IF NOT mr_pool_take(p_club_id, v_member.member_id, v_points) THEN
    RETURN mr_fail('insufficient_partner_points_pool', p_request_id);
  END IF;
  v_ms := mr_add_entry(v_member.member_id, p_club_id, 'earn_award', 'Points for ' || (p_cmd->>'merchantName'),
                       v_points, 0, NULL, p_cmd->>'currency', p_cmd->>'merchantName', p_cmd->>'merchantId',
                       v_ext, v_ext, v_points);
  -- Written once, with its createdAt. The same id settled at the same
  -- moment by another member's request: roll everything back as a
  -- serialization failure; the retry then sees the duplicate above.
  INSERT INTO transactions (club_id, member_id, external_id, event_id, merchant_id, merchant_name,
                            amount_minor, currency, rate_bp, points, occurred_at, settled_at, created_ms)
  VALUES (p_club_id, v_member.member_id, v_ext, p_cmd->>'eventId', p_cmd->>'merchantId',
          p_cmd->>'merchantName', (p_cmd->>'amountMinor')::bigint, p_cmd->>'currency',
          v_club.earn_rate_bp, v_points, (p_cmd->>'occurredAt')::timestamptz,
          (p_cmd->>'settledAt')::timestamptz, v_ms)
  ON CONFLICT (club_id, external_id) DO NOTHING;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'transaction % settled concurrently', v_ext USING ERRCODE = 'serialization_failure';
  END IF;
  RETURN mr_ok('ok', p_request_id, jsonb_build_object(
    'eventId', p_cmd->>'eventId', 'status', 'processed', 'externalTransactionId', v_ext,
    'pointsAwarded', v_points, 'balances', mr_balances(v_member.member_id),
    'partner', jsonb_build_object('availablePointsPool', mr_pool_total(p_club_id)),
    'ledgerGroupId', 'settled:' || p_club_id || ':' || v_ext));
END $$;

-- POST /api/v1/transactions/reversed
CREATE FUNCTION mr_do_reverse(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_member members%ROWTYPE;
  v_tx transactions%ROWTYPE;
  v_amount bigint;
  v_points bigint;
  v_ms bigint;
  v_ext text := p_cmd->>'externalTransactionId';
BEGIN
  SELECT * INTO v_member FROM members
  WHERE club_id = p_club_id AND external_id = p_cmd->>'externalMemberId' FOR UPDATE;
  IF v_member.member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  IF v_member.status = 'closed' THEN RETURN mr_fail('member_closed', p_request_id); END IF;
  SELECT * INTO v_tx FROM transactions WHERE club_id = p_club_id AND external_id = v_ext FOR UPDATE;
  IF v_tx.tx_id IS NULL OR v_tx.member_id <> v_member.member_id THEN
    RETURN mr_fail('transaction_not_found', p_request_id);
  END IF;
  IF v_tx.currency <> p_cmd->>'currency' THEN
    RETURN jsonb_build_object('outcome', 'invalid_request', 'requestId', p_request_id,
      'message', 'The currency is not the settled transaction''s (' || v_tx.currency || ').',
      'details', jsonb_build_array(jsonb_build_object('field', 'transaction.currency',
                                                      'problem', 'must be ' || v_tx.currency)));
  END IF;
  IF v_tx.reversed_amount = v_tx.amount_minor THEN
    RETURN mr_fail('transaction_already_reversed', p_request_id);
  END IF;
  v_amount := coalesce((p_cmd->>'amountMinor')::bigint, v_tx.amount_minor - v_tx.reversed_amount);
  IF v_tx.reversed_amount + v_amount > v_tx.amount_minor THEN
    RETURN mr_fail('reversal_exceeds_settled_amount', p_request_id,
                   (v_tx.amount_minor - v_tx.reversed_amount) || ' minor units are left to reverse.');
  END IF;
  v_points := mr_reversal_points(v_tx.reversed_amount + v_amount, v_tx.rate_bp, v_tx.reversed_points);
  UPDATE transactions SET reversed_amount = reversed_amount + v_amount,
                          reversed_points = reversed_points + v_points
  WHERE tx_id = v_tx.tx_id;
  v_ms := mr_add_entry(v_member.member_id, p_club_id, 'earn_reversal', 'Reversal at ' || v_tx.merchant_name,
                       -v_points, 0, NULL, v_tx.currency, v_tx.merchant_name, v_tx.merchant_id, v_ext, v_ext,
                       -v_points);
  INSERT INTO reversals (tx_id, member_id, event_id, amount_minor, points, reason, occurred_at, created_ms)
  VALUES (v_tx.tx_id, v_member.member_id, p_cmd->>'eventId', v_amount, v_points, p_cmd->>'reason',
          (p_cmd->>'occurredAt')::timestamptz, v_ms);
  PERFORM mr_pool_give(p_club_id, v_member.member_id, v_points);
  RETURN mr_ok('ok', p_request_id, jsonb_build_object(
    'eventId', p_cmd->>'eventId', 'status', 'processed', 'externalTransactionId', v_ext,
    'pointsReversed', v_points, 'balances', mr_balances(v_member.member_id),
    'partner', jsonb_build_object('availablePointsPool', mr_pool_total(p_club_id)),
    'ledgerGroupId', 'reversed:' || p_club_id || ':' || v_ext));
END $$;

-- Every points-changing request: take the club's idempotency key, do the
-- work, keep the result, all in the caller's one transaction. A
-- transaction-scoped advisory lock on (club, key) makes a concurrent request
-- with the same key wait until this one commits and then read its result;
-- the record is written once, at the end. Every outcome decided here is kept.
CREATE FUNCTION mr_write(p_op text, p_club_id bigint, p_partner_ref text, p_idem_key text,
                         p_fingerprint text, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_record idempotency_records%ROWTYPE;
  v_result jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(p_club_id::int, hashtext(p_idem_key));
  SELECT * INTO v_record FROM idempotency_records WHERE club_id = p_club_id AND idem_key = p_idem_key;
  IF FOUND THEN
    IF v_record.fingerprint <> p_fingerprint THEN
      RETURN mr_fail('duplicate_idempotency_conflict', p_request_id);
    END IF;
    RETURN v_record.result || '{"replayed": true}';
  END IF;
  IF p_cmd->>'partnerRef' IS DISTINCT FROM p_partner_ref THEN
    v_result := mr_fail('partner_not_found', p_request_id);
  ELSIF p_op = 'member' THEN
    v_result := mr_do_member(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'settle' THEN
    v_result := mr_do_settle(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'reverse' THEN
    v_result := mr_do_reverse(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'redeem' THEN  -- 003_redemptions.sql
    v_result := mr_do_redeem(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'close' THEN   -- 003_redemptions.sql
    v_result := mr_do_close(p_club_id, p_request_id, p_cmd);
  ELSE
    RAISE EXCEPTION 'unknown operation %', p_op;
  END IF;
  -- invalid_request is not kept: the client may fix the request and retry.
  IF v_result->>'outcome' <> 'invalid_request' THEN
    INSERT INTO idempotency_records (club_id, idem_key, fingerprint, result)
    VALUES (p_club_id, p_idem_key, p_fingerprint, v_result);
  END IF;
  RETURN v_result;
END $$;

-- GET /api/v1/members/{id}/balance
CREATE FUNCTION mr_balance(p_club_id bigint, p_member text, p_request_id text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT coalesce((
    SELECT mr_ok('ok', p_request_id, jsonb_build_object(
      'externalMemberId', m.external_id, 'memberStatus', m.status,
      'pointsBalance', m.available, 'reservedPointsBalance', m.reserved,
      'lifetimePointsEarned', m.lifetime_earned, 'lifetimePointsRedeemed', m.lifetime_redeemed,
      'currency', c.payout_currency,
      'cashValueMinor', greatest(m.available, 0)::numeric * coalesce(c.redemption_rate_minor, 0)))
    FROM members m JOIN clubs c USING (club_id)
    WHERE m.club_id = p_club_id AND m.external_id = p_member),
    mr_fail('cardholder_not_found', p_request_id))
$$;

CREATE FUNCTION mr_filter_types(p_filter text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE p_filter
    WHEN 'earned' THEN ARRAY['earn_award']
    WHEN 'reversed' THEN ARRAY['earn_reversal']
    WHEN 'reserved' THEN ARRAY['redeem_reserve']
    WHEN 'redeemed' THEN ARRAY['redeem_burn']
    WHEN 'released' THEN ARRAY['redeem_release']
    WHEN 'adjusted' THEN ARRAY['close_forfeit', 'manual_adjustment']
    ELSE NULL END
$$;

-- GET /api/v1/members/{id}/points: newest first, strictly older than
-- p_before; nextBefore is null when no older entry exists.
CREATE FUNCTION mr_points(p_club_id bigint, p_member text, p_filter text, p_limit int, p_before bigint,
                          p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_member_id bigint;
  v_types text[] := mr_filter_types(p_filter);
  v_rows jsonb;
  v_ms bigint[];
BEGIN
  SELECT member_id INTO v_member_id FROM members WHERE club_id = p_club_id AND external_id = p_member;
  IF v_member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  SELECT coalesce(jsonb_agg(e ORDER BY ms DESC), '[]'::jsonb), array_agg(ms ORDER BY ms DESC)
    INTO v_rows, v_ms FROM (
    SELECT created_ms AS ms, jsonb_build_object(
      'id', entry_id, 'entryType', entry_type, 'description', description,
      'pointsDelta', delta_available + delta_reserved, 'pointsDeltaAvailable', delta_available,
      'pointsDeltaReserved', delta_reserved, 'cashValueMinor', cash_value_minor, 'currency', currency,
      'createdAt', mr_ms_text(created_ms), 'merchantName', merchant_name, 'merchantId', merchant_id,
      'externalTransactionId', external_tx_id, 'ledgerGroupId', club_id || ':' || group_ref) AS e
    FROM ledger_entries
    WHERE member_id = v_member_id AND (p_before IS NULL OR created_ms < p_before)
      AND (v_types IS NULL OR entry_type = ANY (v_types))
    ORDER BY created_ms DESC LIMIT p_limit + 1) page;
  RETURN mr_page(v_rows, v_ms, p_limit, p_request_id);
END $$;

-- Cuts the extra row a page query fetched to learn whether older ones exist.
CREATE FUNCTION mr_page(p_rows jsonb, p_ms bigint[], p_limit int, p_request_id text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT mr_ok('ok', p_request_id, jsonb_build_object(
    'entries', CASE WHEN cardinality(p_ms) > p_limit THEN p_rows - p_limit ELSE p_rows END,
    'nextBefore', CASE WHEN cardinality(p_ms) > p_limit THEN p_ms[p_limit] END))
$$;

-- GET /api/v1/members/{id}/transactions
CREATE FUNCTION mr_transactions(p_club_id bigint, p_member text, p_limit int, p_before bigint,
                                p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_member_id bigint;
  v_rows jsonb;
  v_ms bigint[];
BEGIN
  SELECT member_id INTO v_member_id FROM members WHERE club_id = p_club_id AND external_id = p_member;
  IF v_member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  SELECT coalesce(jsonb_agg(e ORDER BY ms DESC), '[]'::jsonb), array_agg(ms ORDER BY ms DESC)
    INTO v_rows, v_ms FROM (
    SELECT ms, e FROM (
      SELECT t.created_ms AS ms, jsonb_build_object(
        'externalTransactionId', t.external_id, 'type', 'settled', 'eventId', t.event_id,
        'merchantId', t.merchant_id, 'merchantName', t.merchant_name, 'amountMinor', t.amount_minor,
        'currency', t.currency, 'pointsDelta', t.points, 'occurredAt', mr_ts_text(t.occurred_at),
        'settledAt', mr_ts_text(t.settled_at), 'createdAt', mr_ms_text(t.created_ms)) AS e
      FROM transactions t WHERE t.member_id = v_member_id
      UNION ALL
      SELECT r.created_ms, jsonb_build_object(
        'externalTransactionId', t.external_id, 'type', 'reversed', 'eventId', r.event_id,
        'merchantId', t.merchant_id, 'merchantName', t.merchant_name, 'amountMinor', r.amount_minor,
        'currency', t.currency, 'pointsDelta', -r.points, 'occurredAt', mr_ts_text(r.occurred_at),
        'createdAt', mr_ms_text(r.created_ms))
      FROM reversals r JOIN transactions t USING (tx_id) WHERE r.member_id = v_member_id
    ) u
    WHERE p_before IS NULL OR ms < p_before
    ORDER BY ms DESC LIMIT p_limit + 1) page;
  RETURN mr_page(v_rows, v_ms, p_limit, p_request_id);
END $$;

-- mrctl member adjust: a manual_adjustment moves points between the pool
-- and the member, so the books still balance.
CREATE FUNCTION mr_adjust(p_ref text, p_member text, p_points bigint, p_reason text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_club clubs%ROWTYPE;
  v_member members%ROWTYPE;
BEGIN
  SELECT * INTO v_club FROM clubs WHERE partner_ref = p_ref;
  IF v_club.club_id IS NULL THEN RAISE EXCEPTION 'no club %', p_ref; END IF;
  SELECT * INTO v_member FROM members WHERE club_id = v_club.club_id AND external_id = p_member FOR UPDATE;
  IF v_member.member_id IS NULL THEN RAISE EXCEPTION 'no member % in club %', p_member, p_ref; END IF;
  IF v_member.status = 'closed' THEN RAISE EXCEPTION 'member % is closed', p_member; END IF;
  IF p_points = 0 OR coalesce(p_reason, '') = '' THEN RAISE EXCEPTION 'points must be non-zero and a reason given'; END IF;
  IF p_points > 0 THEN
    IF NOT mr_pool_take(v_club.club_id, v_member.member_id, p_points) THEN
      RAISE EXCEPTION 'the points pool of % cannot cover % points', p_ref, p_points;
    END IF;
  ELSE
    PERFORM mr_pool_give(v_club.club_id, v_member.member_id, -p_points);
  END IF;
  PERFORM mr_add_entry(v_member.member_id, v_club.club_id, 'manual_adjustment', p_reason, p_points, 0, NULL,
                       v_club.payout_currency, NULL, NULL, NULL, 'adjustment');
  RETURN jsonb_build_object('externalMemberId', p_member, 'pointsAdjusted', p_points,
                            'balances', mr_balances(v_member.member_id));
END $$;

