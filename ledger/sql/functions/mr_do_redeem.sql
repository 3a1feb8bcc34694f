-- POST /api/v1/redemptions (003), with duplicate_request_id decided right
-- after the partner check (mr_write's), before every other business check,
-- so a retried requestId always gets it, whatever changed since (the
-- balance, the member, the club's settings), and names the first
-- redemption. A transaction-scoped advisory lock on (club, requestId) makes
-- a concurrent request with the same requestId (under another idempotency
-- key) wait until this one ends and then find its redemption: without it,
-- both would pass the lookup and the second could be refused for the points
-- the first had just reserved. Lock order: idempotency key (mr_write), this
-- requestId, member, club. Every other check, and the answer, as in 003;
-- the club row's UPDATE also takes the redemption's created_ms.
CREATE OR REPLACE FUNCTION mr_do_redeem(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_club clubs%ROWTYPE;
  v_member members%ROWTYPE;
  v_wallet wallets%ROWTYPE;
  v_points bigint := (p_cmd->>'points')::bigint;
  v_value numeric;
  v_redemption text;
  v_payout text;
  v_ms bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('redeem:' || p_club_id::text || ':' || (p_cmd->>'requestId'), 0));
  SELECT redemption_id INTO v_redemption FROM redemptions
  WHERE club_id = p_club_id AND request_id = p_cmd->>'requestId';
  IF v_redemption IS NOT NULL THEN RETURN mr_fail_duplicate_request(p_request_id, v_redemption); END IF;
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
  -- Capacity is reserved on the club row: redemptions queue here, awards
  -- never do. The same update takes the club's next redemption millisecond.
  UPDATE clubs SET cash_capacity_minor = cash_capacity_minor - v_value::bigint,
                   last_redemption_ms = greatest(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
                                                 last_redemption_ms + 1)
  WHERE club_id = p_club_id AND cash_capacity_minor >= v_value::bigint
  RETURNING last_redemption_ms INTO v_ms;
  IF NOT FOUND THEN RETURN mr_fail('insufficient_partner_cash_capacity', p_request_id); END IF;
  v_redemption := mr_new_id('rdm_');
  INSERT INTO redemptions (redemption_id, club_id, member_id, request_id, points, cash_value_minor, currency,
                           created_ms, created_at, updated_at)
  VALUES (v_redemption, p_club_id, v_member.member_id, p_cmd->>'requestId', v_points, v_value::bigint,
          v_club.payout_currency, v_ms, timestamptz 'epoch' + v_ms * interval '1 millisecond',
          timestamptz 'epoch' + v_ms * interval '1 millisecond')
  ON CONFLICT (club_id, request_id) DO NOTHING;
  IF NOT FOUND THEN
    -- Not reached while the lock above serialises a requestId; kept so that
    -- a duplicate can never reserve twice.
    UPDATE clubs SET cash_capacity_minor = cash_capacity_minor + v_value::bigint WHERE club_id = p_club_id;
    SELECT redemption_id INTO v_redemption FROM redemptions
    WHERE club_id = p_club_id AND request_id = p_cmd->>'requestId';
    RETURN mr_fail_duplicate_request(p_request_id, v_redemption);
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
END $function$;
