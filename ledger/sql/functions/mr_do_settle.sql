-- POST /api/v1/transactions/settled
CREATE OR REPLACE FUNCTION mr_do_settle(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
  RETURN mr_transaction_answer('settled', p_request_id, p_cmd, v_points, v_member.member_id, p_club_id);
END $function$;
