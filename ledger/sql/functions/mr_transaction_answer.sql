-- The answer to a settled or reversed transaction (p_kind 'settled' or
-- 'reversed'; p_points what it awarded or took back): one shape for both.
-- An expression only, so PostgreSQL inlines it where it is called.
CREATE OR REPLACE FUNCTION mr_transaction_answer(p_kind text, p_request_id text, p_cmd jsonb, p_points bigint, p_member_id bigint, p_club_id bigint)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT mr_ok('ok', p_request_id, jsonb_build_object(
    'eventId', p_cmd->>'eventId', 'status', 'processed', 'externalTransactionId', p_cmd->>'externalTransactionId',
    CASE p_kind WHEN 'settled' THEN 'pointsAwarded' ELSE 'pointsReversed' END, p_points,
    'balances', mr_balances(p_member_id),
    'partner', jsonb_build_object('availablePointsPool', mr_pool_total(p_club_id)),
    'ledgerGroupId', p_kind || ':' || p_club_id || ':' || (p_cmd->>'externalTransactionId')))
$function$;
