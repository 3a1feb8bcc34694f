-- Redemptions and payouts (contract section 7) and closing members
-- (section 4). Points are reserved at once and burned only when the payout
-- succeeds; a failed payout gives points and cash capacity back.

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

-- Opaque, time-ordered ids: prefix, milliseconds in hex, random.
CREATE FUNCTION mr_new_id(p_prefix text) RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT p_prefix || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
         || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12)
$$;

CREATE FUNCTION mr_capacity_topup(p_ref text, p_minor bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_club bigint;
BEGIN
  IF p_minor <= 0 THEN RAISE EXCEPTION 'minor units must be positive'; END IF;
  UPDATE clubs SET cash_capacity_minor = cash_capacity_minor + p_minor, updated_at = now()
  WHERE partner_ref = p_ref RETURNING club_id INTO v_club;
  IF v_club IS NULL THEN RAISE EXCEPTION 'no club %', p_ref; END IF;
  RETURN mr_club_json(v_club);
END $$;

-- POST /api/v1/redemptions, in the contract's order of checks.
CREATE FUNCTION mr_do_redeem(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_club clubs%ROWTYPE;
  v_member members%ROWTYPE;
  v_wallet wallets%ROWTYPE;
  v_points bigint := (p_cmd->>'points')::bigint;
  v_value numeric;
  v_redemption text;
  v_payout text;
BEGIN
  SELECT * INTO v_club FROM clubs WHERE club_id = p_club_id;
  IF coalesce(v_club.redemption_rate_minor, 0) = 0 OR v_club.payout_currency IS NULL THEN
    RETURN mr_fail('partner_configuration_incomplete', p_request_id);
  END IF;
  SELECT * INTO v_member FROM members
  WHERE club_id = p_club_id AND external_id = p_cmd->>'externalMemberId' FOR UPDATE;
  IF v_member.member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  IF v_member.status = 'closed' THEN RETURN mr_fail('member_closed', p_request_id); END IF;
  IF v_points < 1 OR v_points > 1000000000 THEN
    RETURN mr_fail('invalid_redemption_points', p_request_id);
  END IF;
  IF v_points < v_club.min_redemption_points THEN
    RETURN mr_fail('minimum_redemption', p_request_id,
                   'The minimum redemption is ' || v_club.min_redemption_points || ' points.');
  END IF;
  IF NOT mr_payout_ready(v_member.member_id) THEN RETURN mr_fail('missing_payout_reference', p_request_id); END IF;
  IF v_member.available < v_points THEN RETURN mr_fail('insufficient_points_balance', p_request_id); END IF;
  v_value := v_points::numeric * v_club.redemption_rate_minor;
  IF p_cmd->>'currency' <> v_club.payout_currency OR v_value <= 0 OR v_value > 9223372036854775807 THEN
    RETURN mr_fail('invalid_redemption_value', p_request_id);
  END IF;
  IF v_club.funding_restricted THEN RETURN mr_fail('partner_funding_restricted', p_request_id); END IF;
  -- Capacity is reserved on the club row: redemptions queue here, awards never do.
  UPDATE clubs SET cash_capacity_minor = cash_capacity_minor - v_value::bigint
  WHERE club_id = p_club_id AND cash_capacity_minor >= v_value::bigint;
  IF NOT FOUND THEN RETURN mr_fail('insufficient_partner_cash_capacity', p_request_id); END IF;
  v_redemption := mr_new_id('rdm_');
  INSERT INTO redemptions (redemption_id, club_id, member_id, request_id, points, cash_value_minor, currency)
  VALUES (v_redemption, p_club_id, v_member.member_id, p_cmd->>'requestId', v_points, v_value::bigint,
          v_club.payout_currency)
  ON CONFLICT (club_id, request_id) DO NOTHING;
  IF NOT FOUND THEN
    UPDATE clubs SET cash_capacity_minor = cash_capacity_minor + v_value::bigint WHERE club_id = p_club_id;
    RETURN mr_fail('duplicate_request_id', p_request_id);
  END IF;
  SELECT * INTO v_wallet FROM wallets WHERE member_id = v_member.member_id;
  v_payout := mr_new_id('po_');
  INSERT INTO payouts (payout_id, redemption_id, club_id, account_number, sort_code, account_name)
  VALUES (v_payout, v_redemption, p_club_id, v_wallet.account_number, v_wallet.sort_code, v_wallet.account_name);
  PERFORM mr_add_entry(v_member.member_id, p_club_id, 'redeem_reserve', 'Points reserved for a redemption',
                       -v_points, v_points, v_value::bigint, v_club.payout_currency, NULL, NULL, NULL, v_redemption);
  RETURN mr_ok('accepted', p_request_id, jsonb_build_object(
    'redemptionId', v_redemption, 'status', 'payout_pending', 'externalMemberId', v_member.external_id,
    'pointsRedeemed', v_points, 'cashValueMinor', v_value::bigint, 'currency', v_club.payout_currency,
    'payout', jsonb_build_object('payoutId', v_payout, 'status', 'created'),
    'balances', mr_balances(v_member.member_id)));
END $$;

-- POST /api/v1/members/{id}/close
CREATE FUNCTION mr_do_close(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_member members%ROWTYPE;
  v_club clubs%ROWTYPE;
  v_forfeit bigint;
BEGIN
  SELECT * INTO v_member FROM members
  WHERE club_id = p_club_id AND external_id = p_cmd->>'externalMemberId' FOR UPDATE;
  IF v_member.member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  IF v_member.status = 'closed' THEN RETURN mr_fail('member_closed', p_request_id); END IF;
  IF EXISTS (SELECT 1 FROM redemptions WHERE member_id = v_member.member_id AND status = 'payout_pending') THEN
    RETURN mr_fail('member_has_pending_redemptions', p_request_id);
  END IF;
  SELECT * INTO v_club FROM clubs WHERE club_id = p_club_id;
  -- The available balance goes back to the pool. A negative balance (points
  -- reversed after they were redeemed) is left as it is: zeroing it would
  -- hand out points.
  v_forfeit := greatest(v_member.available, 0);
  IF v_forfeit > 0 THEN
    PERFORM mr_add_entry(v_member.member_id, p_club_id, 'close_forfeit',
                         coalesce('Closed: ' || (p_cmd->>'reason'), 'Closed'), -v_forfeit, 0, NULL,
                         v_club.payout_currency, NULL, NULL, NULL, 'close');
    PERFORM mr_pool_give(p_club_id, v_member.member_id, v_forfeit);
  END IF;
  UPDATE members SET status = 'closed', closed_at = clock_timestamp(), updated_at = now()
  WHERE member_id = v_member.member_id RETURNING * INTO v_member;
  RETURN mr_ok('ok', p_request_id, jsonb_build_object(
    'externalMemberId', v_member.external_id, 'status', 'closed', 'closedAt', mr_ts_text(v_member.closed_at),
    'pointsForfeited', v_forfeit));
END $$;

CREATE FUNCTION mr_redemption_json(p_redemption text) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'redemptionId', r.redemption_id, 'requestId', r.request_id, 'status', r.status,
    'externalMemberId', m.external_id, 'pointsRedeemed', r.points, 'cashValueMinor', r.cash_value_minor,
    'currency', r.currency,
    'payout', jsonb_build_object('payoutId', p.payout_id, 'status', p.status, 'failureReason', p.failure_reason),
    'createdAt', mr_ts_text(r.created_at), 'updatedAt', mr_ts_text(r.updated_at))
  FROM redemptions r JOIN members m USING (member_id) JOIN payouts p USING (redemption_id)
  WHERE r.redemption_id = p_redemption
$$;

-- GET /api/v1/redemptions/{id}: another club's is not found, never shown.
CREATE FUNCTION mr_redemption(p_club_id bigint, p_redemption text, p_request_id text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT coalesce(
    (SELECT mr_ok('ok', p_request_id, mr_redemption_json(redemption_id)) FROM redemptions
     WHERE redemption_id = p_redemption AND club_id = p_club_id),
    mr_fail('redemption_not_found', p_request_id))
$$;

-- A payout result (ops listener, mrctl, simulator). Each move happens once:
-- the same result again is a no-op that succeeds, a contradicting one raises
-- payout_state_conflict. Lock order: payout, then member, then club.
CREATE FUNCTION mr_payout_move(p_payout text, p_to text, p_reason text DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_payout payouts%ROWTYPE;
  v_red redemptions%ROWTYPE;
BEGIN
  IF p_to NOT IN ('submitted', 'succeeded', 'failed') THEN
    RAISE EXCEPTION 'unknown payout status %', p_to;
  END IF;
  SELECT * INTO v_payout FROM payouts WHERE payout_id = p_payout FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'no payout %', p_payout USING ERRCODE = 'P0002'; END IF;
  IF v_payout.status = p_to THEN RETURN mr_redemption_json(v_payout.redemption_id); END IF;
  IF v_payout.status IN ('succeeded', 'failed') OR (p_to = 'submitted' AND v_payout.status <> 'created') THEN
    RAISE EXCEPTION 'payout_state_conflict: payout % is %, cannot become %', p_payout, v_payout.status, p_to
      USING ERRCODE = 'P0409';
  END IF;
  SELECT * INTO v_red FROM redemptions WHERE redemption_id = v_payout.redemption_id;
  PERFORM 1 FROM members WHERE member_id = v_red.member_id FOR UPDATE;
  UPDATE payouts SET status = p_to, failure_reason = CASE WHEN p_to = 'failed' THEN coalesce(p_reason, 'failed') END,
                     updated_at = clock_timestamp()
  WHERE payout_id = p_payout;
  IF p_to = 'succeeded' THEN
    PERFORM mr_add_entry(v_red.member_id, v_red.club_id, 'redeem_burn', 'Redemption paid out', 0, -v_red.points,
                         v_red.cash_value_minor, v_red.currency, NULL, NULL, NULL, v_red.redemption_id);
    UPDATE members SET lifetime_redeemed = lifetime_redeemed + v_red.points WHERE member_id = v_red.member_id;
    UPDATE clubs SET burned_points = burned_points + v_red.points WHERE club_id = v_red.club_id;
    UPDATE redemptions SET status = 'completed', updated_at = clock_timestamp() WHERE redemption_id = v_red.redemption_id;
  ELSIF p_to = 'failed' THEN
    PERFORM mr_add_entry(v_red.member_id, v_red.club_id, 'redeem_release', 'Payout failed: points returned',
                         v_red.points, -v_red.points, v_red.cash_value_minor, v_red.currency, NULL, NULL, NULL,
                         v_red.redemption_id);
    UPDATE clubs SET cash_capacity_minor = cash_capacity_minor + v_red.cash_value_minor WHERE club_id = v_red.club_id;
    UPDATE redemptions SET status = 'failed', updated_at = clock_timestamp() WHERE redemption_id = v_red.redemption_id;
  END IF;
  RETURN mr_redemption_json(v_red.redemption_id);
END $$;

CREATE FUNCTION mr_payouts(p_status text, p_limit int DEFAULT 100) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT coalesce(jsonb_agg(j ORDER BY created_at), '[]'::jsonb) FROM (
    SELECT p.created_at, jsonb_build_object('payoutId', p.payout_id, 'status', p.status,
      'redemptionId', p.redemption_id, 'partnerRef', c.partner_ref, 'cashValueMinor', r.cash_value_minor,
      'currency', r.currency, 'accountNumber', p.account_number, 'sortCode', p.sort_code,
      'accountName', p.account_name, 'createdAt', mr_ts_text(p.created_at)) AS j
    FROM payouts p JOIN redemptions r USING (redemption_id) JOIN clubs c ON c.club_id = p.club_id
    WHERE p_status IS NULL OR p.status = p_status
    ORDER BY p.created_at LIMIT p_limit) x
$$;

-- The sandbox payout simulator: settles payouts older than the delay,
-- success except bank account 00000000. SKIP LOCKED lets any number of
-- workers and nodes run it at once; each payout moves exactly once.
CREATE FUNCTION mr_payout_simulate(p_delay_ms bigint, p_batch int DEFAULT 50) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  r record;
  n int := 0;
BEGIN
  FOR r IN SELECT payout_id, account_number FROM payouts
           WHERE status IN ('created', 'submitted')
             AND created_at <= clock_timestamp() - p_delay_ms * interval '1 millisecond'
           ORDER BY created_at LIMIT p_batch FOR UPDATE SKIP LOCKED LOOP
    IF r.account_number = '00000000' THEN
      PERFORM mr_payout_move(r.payout_id, 'failed', 'simulated: the bank rejected account 00000000');
    ELSE
      PERFORM mr_payout_move(r.payout_id, 'succeeded');
    END IF;
    n := n + 1;
  END LOOP;
  RETURN n;
END $$;

-- A Prometheus label value: backslash, quote and newline escaped.
CREATE FUNCTION mr_prom_label(p text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT replace(replace(replace(p, E'\\', E'\\\\'), '"', E'\\"'), E'\n', E'\\n')
$$;

-- Prometheus text for the ops listener's /metrics: the books, as gauges.
CREATE FUNCTION mr_metrics() RETURNS text LANGUAGE sql STABLE AS $$
  SELECT concat_ws(E'\n',
    '# HELP mr_payouts Payouts by status.', '# TYPE mr_payouts gauge',
    (SELECT string_agg(format('mr_payouts{status="%s"} %s', s, (SELECT count(*) FROM payouts p WHERE p.status = s)), E'\n')
     FROM unnest(ARRAY['created', 'submitted', 'succeeded', 'failed']) s),
    '# HELP mr_members Members by status.', '# TYPE mr_members gauge',
    (SELECT string_agg(format('mr_members{status="%s"} %s', s, (SELECT count(*) FROM members m WHERE m.status = s)), E'\n')
     FROM unnest(ARRAY['active', 'closed']) s),
    '# HELP mr_club_points_pool Points left in each club''s pool.', '# TYPE mr_club_points_pool gauge',
    (SELECT string_agg(format('mr_club_points_pool{partner_ref="%s"} %s', mr_prom_label(c.partner_ref), mr_pool_total(c.club_id)), E'\n')
     FROM clubs c),
    '# HELP mr_club_cash_capacity_minor Cash capacity left per club.', '# TYPE mr_club_cash_capacity_minor gauge',
    (SELECT string_agg(format('mr_club_cash_capacity_minor{partner_ref="%s"} %s', mr_prom_label(c.partner_ref), c.cash_capacity_minor), E'\n')
     FROM clubs c),
    '# HELP mr_ledger_entries Ledger entries written.', '# TYPE mr_ledger_entries gauge',
    'mr_ledger_entries ' || (SELECT count(*) FROM ledger_entries)) || E'\n'
$$;

-- mrctl audit: every difference between the books and the rows they sum.
-- Here rather than in 002 because it reads redemptions. Checks: member balances = sum of
-- entries, lifetime earned = award and reversal entries, club books
-- (pool + members' available + reserved + burned = funded). Added: the
-- other caches the books rely on, each compared with the rows it sums, so a
-- difference is named where it starts rather than only as a club total:
-- lifetime redeemed and burned points against burn entries, reserved
-- points against pending redemptions, each transaction's points and
-- reversed totals against its entries and reversal rows, and every club's
-- 16 pool stripes.
CREATE FUNCTION mr_audit() RETURNS SETOF text LANGUAGE sql STABLE AS $$
  SELECT format('member %s of club %s: balances %s/%s, entries sum to %s/%s', m.external_id, c.partner_ref,
                m.available, m.reserved, coalesce(e.avail, 0), coalesce(e.res, 0))
  FROM members m JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, sum(delta_available) AS avail, sum(delta_reserved) AS res
             FROM ledger_entries GROUP BY member_id) e USING (member_id)
  WHERE m.available <> coalesce(e.avail, 0) OR m.reserved <> coalesce(e.res, 0)
  UNION ALL
  SELECT format('member %s of club %s: lifetime earned %s, award entries sum to %s', m.external_id,
                c.partner_ref, m.lifetime_earned, coalesce(e.earned, 0))
  FROM members m JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, sum(delta_available) AS earned FROM ledger_entries
             WHERE entry_type IN ('earn_award', 'earn_reversal') GROUP BY member_id) e USING (member_id)
  WHERE m.lifetime_earned <> coalesce(e.earned, 0)
  UNION ALL
  SELECT format('member %s of club %s: lifetime redeemed %s, burn entries sum to %s', m.external_id,
                c.partner_ref, m.lifetime_redeemed, coalesce(e.burned, 0))
  FROM members m JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, -sum(delta_reserved) AS burned FROM ledger_entries
             WHERE entry_type = 'redeem_burn' GROUP BY member_id) e USING (member_id)
  WHERE m.lifetime_redeemed <> coalesce(e.burned, 0)
  UNION ALL
  SELECT format('member %s of club %s: reserved %s, pending redemptions hold %s', m.external_id,
                c.partner_ref, m.reserved, coalesce(p.held, 0))
  FROM members m JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, sum(points) AS held FROM redemptions
             WHERE status = 'payout_pending' GROUP BY member_id) p USING (member_id)
  WHERE m.reserved <> coalesce(p.held, 0)
  UNION ALL
  SELECT format('club %s: burned %s, members redeemed %s', c.partner_ref, c.burned_points, coalesce(m.redeemed, 0))
  FROM clubs c
  LEFT JOIN (SELECT club_id, sum(lifetime_redeemed) AS redeemed FROM members GROUP BY club_id) m USING (club_id)
  WHERE c.burned_points <> coalesce(m.redeemed, 0)
  UNION ALL
  SELECT format('club %s: %s pool stripes, not 16', c.partner_ref, count(s.stripe))
  FROM clubs c LEFT JOIN club_pool_stripes s USING (club_id)
  GROUP BY c.club_id, c.partner_ref HAVING count(s.stripe) <> 16
  UNION ALL
  SELECT format('club %s: pool %s + members %s + burned %s <> funded %s', c.partner_ref, coalesce(p.pool, 0),
                coalesce(m.held, 0), c.burned_points, c.funded_points)
  FROM clubs c
  LEFT JOIN (SELECT club_id, sum(points) AS pool FROM club_pool_stripes GROUP BY club_id) p USING (club_id)
  LEFT JOIN (SELECT club_id, sum(available + reserved) AS held FROM members GROUP BY club_id) m USING (club_id)
  WHERE coalesce(p.pool, 0) + coalesce(m.held, 0) + c.burned_points <> c.funded_points
  UNION ALL
  SELECT format('transaction %s of club %s: points %s/reversed %s, entries %s/%s; amount reversed %s, reversal rows %s/%s',
                t.external_id, c.partner_ref, t.points, t.reversed_points, coalesce(e.award, 0),
                coalesce(e.reversal, 0), t.reversed_amount, coalesce(r.amount, 0), coalesce(r.points, 0))
  FROM transactions t JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, external_tx_id,
                    sum(delta_available) FILTER (WHERE entry_type = 'earn_award') AS award,
                    -sum(delta_available) FILTER (WHERE entry_type = 'earn_reversal') AS reversal
             FROM ledger_entries WHERE entry_type IN ('earn_award', 'earn_reversal')
             GROUP BY member_id, external_tx_id) e
    ON e.member_id = t.member_id AND e.external_tx_id = t.external_id
  LEFT JOIN (SELECT tx_id, sum(amount_minor) AS amount, sum(points) AS points FROM reversals GROUP BY tx_id) r
    USING (tx_id)
  WHERE e.award IS DISTINCT FROM t.points OR coalesce(e.reversal, 0) <> t.reversed_points
     OR coalesce(r.amount, 0) <> t.reversed_amount OR coalesce(r.points, 0) <> t.reversed_points
$$;
