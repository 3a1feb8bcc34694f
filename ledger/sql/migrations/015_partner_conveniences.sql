-- Partner conveniences (contract section 9): GET /api/v1/club, the club's
-- redemptions listed and paged exactly (GET /api/v1/redemptions), and
-- duplicate_request_id decided first and naming the first redemption.
-- Applies after 014 (events), which restated mr_write and wraps
-- mr_payout_move; neither is restated here.
--
-- Paging redemptions. Each redemption gets created_ms, a millisecond that
-- strictly increases per club, as ledger entries have per member (002): a
-- later redemption of the club in the same millisecond takes the next one.
-- The cursor is then one number, as the histories' is: `before` returns the
-- redemptions strictly older, `nextBefore` is the createdAt of the last one
-- listed, and no page skips or repeats one even when several redemptions
-- share a millisecond. A tiebreak (created_at, redemption_id) would order
-- exactly too, but only a cursor of two parts could page on it exactly, and
-- `before` is milliseconds, as histories take it; on created_at alone two
-- redemptions of one millisecond would be split by a page boundary and one
-- of them skipped. The counter is clubs.last_redemption_ms, moved by the
-- UPDATE of the club row that every accepted redemption already makes (the
-- cash capacity it reserves): no extra row lock, and since redemptions of a
-- club queue on that row until commit, their milliseconds follow their
-- commit order. A new redemption's created_at is that millisecond, so its
-- createdAt and the cursor agree.
--
-- Indexes: the club's redemptions by created_ms (UNIQUE: it also holds the
-- rule above), a member's, and the club's by status. A requestId is found
-- through UNIQUE (club_id, request_id) (003). All three are on the column
-- this migration adds, so none can be built beforehand: adding the column,
-- filling it (every row is rewritten) and building them hold redemptions
-- locked, so new redemptions and payout moves wait until the migration
-- commits. Measured on a loaded 2-core test machine: 22 s to fill 500,000
-- redemptions, about 1 s for each index. On large books run it in a quiet
-- hour.

ALTER TABLE clubs ADD COLUMN last_redemption_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE redemptions ADD COLUMN created_ms bigint;

-- Redemptions made before: the millisecond of created_at (to_char's .MS,
-- which createdAt showed, truncates), pushed up by as little as it takes
-- where a club's redemptions shared one: n + max(ms_j - j) over j <= n is
-- at least ms_n and exceeds the previous one by at least 1.
UPDATE redemptions r SET created_ms = x.ms
FROM (SELECT redemption_id, n + max(ms - n) OVER (PARTITION BY club_id ORDER BY n) AS ms
      FROM (SELECT redemption_id, club_id, floor(extract(epoch FROM created_at) * 1000)::bigint AS ms,
                   row_number() OVER (PARTITION BY club_id ORDER BY created_at, redemption_id) AS n
            FROM redemptions) y) x
WHERE r.redemption_id = x.redemption_id;
ALTER TABLE redemptions ALTER COLUMN created_ms SET NOT NULL;
UPDATE clubs c SET last_redemption_ms = r.ms
FROM (SELECT club_id, max(created_ms) AS ms FROM redemptions GROUP BY club_id) r
WHERE c.club_id = r.club_id;

CREATE UNIQUE INDEX redemptions_club_created ON redemptions (club_id, created_ms);
CREATE INDEX redemptions_member_created ON redemptions (member_id, created_ms);
CREATE INDEX redemptions_club_status_created ON redemptions (club_id, status, created_ms);

-- duplicate_request_id with the first redemption's id: a member of the
-- result beside "message", which the domain renders as error.redemptionId.
CREATE FUNCTION mr_fail_duplicate_request(p_request_id text, p_redemption text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT mr_fail('duplicate_request_id', p_request_id) || jsonb_build_object('redemptionId', p_redemption)
$$;

-- 003's redemption as GET /api/v1/redemptions/{id} shows it, with createdAt
-- from created_ms: the same millisecond as before for every redemption but
-- one that shared its millisecond with an earlier one of its club, and
-- always the value the list's cursor pages by.
CREATE OR REPLACE FUNCTION mr_redemption_json(p_redemption text) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'redemptionId', r.redemption_id, 'requestId', r.request_id, 'status', r.status,
    'externalMemberId', m.external_id, 'pointsRedeemed', r.points, 'cashValueMinor', r.cash_value_minor,
    'currency', r.currency,
    'payout', jsonb_build_object('payoutId', p.payout_id, 'status', p.status, 'failureReason', p.failure_reason),
    'createdAt', mr_ms_text(r.created_ms), 'updatedAt', mr_ts_text(r.updated_at))
  FROM redemptions r JOIN members m USING (member_id) JOIN payouts p USING (redemption_id)
  WHERE r.redemption_id = p_redemption
$$;

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
CREATE OR REPLACE FUNCTION mr_do_redeem(p_club_id bigint, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
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
END $$;

-- GET /api/v1/club: the calling key's club as partners need it. A setting
-- not made yet (no redemption rate, no payout currency) is null; the
-- environment is the deployment's, which the glue passes.
CREATE FUNCTION mr_club(p_club_id bigint, p_environment text, p_request_id text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT coalesce((
    SELECT mr_ok('ok', p_request_id, jsonb_build_object(
      'partnerRef', c.partner_ref, 'name', c.name, 'environment', nullif(p_environment, ''),
      'earnRateBasisPoints', c.earn_rate_bp, 'redemptionRateMinorPerPoint', c.redemption_rate_minor,
      'payoutCurrency', c.payout_currency, 'supportedCurrencies', to_jsonb(c.currencies),
      'minimumRedemptionPoints', c.min_redemption_points, 'availablePointsPool', mr_pool_total(c.club_id)))
    FROM clubs c WHERE c.club_id = p_club_id),
    mr_fail('partner_not_found', p_request_id))
$$;

-- GET /api/v1/redemptions: the club's redemptions newest first, strictly
-- older than p_before, paged as histories (mr_page: nextBefore null when no
-- older one exists), each as GET /api/v1/redemptions/{id} shows it. Filters
-- (NULL: none): p_request (requestId: at most one), p_member
-- (externalMemberId; an unknown member matches nothing), p_status. Each
-- branch reads at most limit + 1 rows from its index below the cursor, so
-- a page costs the same however many redemptions the club has: a requestId
-- by UNIQUE (club_id, request_id), a member's by redemptions_member_created
-- (a status beside it filters those), a status by
-- redemptions_club_status_created, the rest by redemptions_club_created.
CREATE FUNCTION mr_redemptions(p_club_id bigint, p_request text, p_member text, p_status text, p_limit int,
                               p_before bigint, p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_key bigint := mr_cursor_key(p_before);
  v_member bigint;
  v_ids text[];
  v_ms bigint[];
BEGIN
  IF p_member IS NOT NULL THEN
    SELECT member_id INTO v_member FROM members WHERE club_id = p_club_id AND external_id = p_member;
  END IF;
  IF p_request IS NOT NULL THEN
    SELECT array_agg(redemption_id), array_agg(created_ms) INTO v_ids, v_ms
    FROM redemptions
    WHERE club_id = p_club_id AND request_id = p_request AND created_ms < v_key
      AND (p_status IS NULL OR status = p_status) AND (p_member IS NULL OR member_id = v_member);
  ELSIF p_member IS NOT NULL THEN
    SELECT array_agg(redemption_id ORDER BY created_ms DESC), array_agg(created_ms ORDER BY created_ms DESC)
      INTO v_ids, v_ms
    FROM (SELECT redemption_id, created_ms FROM redemptions
          WHERE member_id = v_member AND created_ms < v_key AND (p_status IS NULL OR status = p_status)
          ORDER BY created_ms DESC LIMIT p_limit + 1) page;
  ELSIF p_status IS NOT NULL THEN
    SELECT array_agg(redemption_id ORDER BY created_ms DESC), array_agg(created_ms ORDER BY created_ms DESC)
      INTO v_ids, v_ms
    FROM (SELECT redemption_id, created_ms FROM redemptions
          WHERE club_id = p_club_id AND status = p_status AND created_ms < v_key
          ORDER BY created_ms DESC LIMIT p_limit + 1) page;
  ELSE
    SELECT array_agg(redemption_id ORDER BY created_ms DESC), array_agg(created_ms ORDER BY created_ms DESC)
      INTO v_ids, v_ms
    FROM (SELECT redemption_id, created_ms FROM redemptions
          WHERE club_id = p_club_id AND created_ms < v_key
          ORDER BY created_ms DESC LIMIT p_limit + 1) page;
  END IF;
  RETURN mr_page(coalesce((SELECT jsonb_agg(mr_redemption_json(u.id) ORDER BY u.n)
                           FROM unnest(v_ids) WITH ORDINALITY u (id, n)), '[]'::jsonb),
                 coalesce(v_ms, '{}'::bigint[]), p_limit, p_request_id);
END $$;
