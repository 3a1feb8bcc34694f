-- POST /api/v1/transactions/reversed
CREATE OR REPLACE FUNCTION mr_do_reverse(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
  RETURN mr_transaction_answer('reversed', p_request_id, p_cmd, v_points, v_member.member_id, p_club_id);
END $function$;
