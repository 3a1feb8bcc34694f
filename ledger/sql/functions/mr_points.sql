-- The jsonb history functions, kept on the row reads above for modules of
-- the release before, which call them during a rolling upgrade: the same
-- answers as the modules render from the rows
-- (tests/integration/history_compare_test.cpp holds them equal, page by
-- page).
CREATE OR REPLACE FUNCTION mr_points(p_club_id bigint, p_member text, p_filter text, p_limit integer, p_before bigint, p_request_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
  RETURN (
    SELECT CASE WHEN count(*) = 0 THEN mr_fail('cardholder_not_found', p_request_id) ELSE mr_page(
      coalesce(jsonb_agg(jsonb_build_object(
        'id', r.entry_id, 'entryType', r.entry_type, 'description', r.description,
        'pointsDelta', r.delta_available + r.delta_reserved, 'pointsDeltaAvailable', r.delta_available,
        'pointsDeltaReserved', r.delta_reserved, 'cashValueMinor', r.cash_value_minor, 'currency', r.currency,
        'createdAt', mr_ms_text(r.created_ms), 'merchantName', r.merchant_name, 'merchantId', r.merchant_id,
        'externalTransactionId', r.external_tx_id, 'ledgerGroupId', r.club_id || ':' || r.group_ref)
        ORDER BY r.created_ms DESC) FILTER (WHERE r.created_ms IS NOT NULL), '[]'::jsonb),
      array_agg(r.created_ms ORDER BY r.created_ms DESC) FILTER (WHERE r.created_ms IS NOT NULL),
      p_limit, p_request_id) END
    FROM (SELECT * FROM mr_points_rows(p_club_id, p_member, p_limit, p_before)
          WHERE mr_filter_types(p_filter) IS NULL
          UNION ALL
          SELECT * FROM mr_points_rows_filtered(p_club_id, p_member, p_filter, p_limit, p_before)
          WHERE mr_filter_types(p_filter) IS NOT NULL) r);
END $function$;
