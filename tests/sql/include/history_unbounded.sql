-- Included (\ir) by history_bounded.sql: the history reads as they first
-- were, before any keyset read (mr_points as 004 and mr_transactions as 002
-- defined them: every row of the member's history turned into jsonb, sorted,
-- then cut), as pg_temp.old_points and pg_temp.old_transactions. Plainly
-- right and plainly unbounded: the reference every bounded page must equal,
-- and the contrast that reads the whole history.
CREATE FUNCTION pg_temp.old_points(p_club_id bigint, p_member text, p_filter text, p_limit int,
                                     p_before bigint, p_request_id text) RETURNS jsonb
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

CREATE FUNCTION pg_temp.old_transactions(p_club_id bigint, p_member text, p_limit int, p_before bigint,
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
