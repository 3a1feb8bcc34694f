-- GET /api/v1/members/{id}/points?filter=...: the filter's types (at most
-- two) each read from ledger_entries_member_type, merged. A filter that
-- names no type (all, or anything unknown) finds no entry.
CREATE OR REPLACE FUNCTION mr_points_rows_filtered(p_club_id bigint, p_member text, p_filter text, p_limit integer, p_before bigint)
 RETURNS TABLE(created_ms bigint, entry_id text, entry_type text, description text, delta_available bigint, delta_reserved bigint, cash_value_minor bigint, currency character, merchant_name text, merchant_id text, external_tx_id text, club_id bigint, group_ref text)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT e.created_ms, e.entry_id, e.entry_type, e.description, e.delta_available, e.delta_reserved,
         e.cash_value_minor, e.currency, e.merchant_name, e.merchant_id, e.external_tx_id, e.club_id, e.group_ref
  FROM members m
  LEFT JOIN LATERAL (
    SELECT * FROM (SELECT * FROM (
      (SELECT x.created_ms, x.entry_id, x.entry_type, x.description, x.delta_available, x.delta_reserved,
              x.cash_value_minor, x.currency, x.merchant_name, x.merchant_id, x.external_tx_id, x.club_id,
              x.group_ref
       FROM ledger_entries x
       WHERE x.member_id = m.member_id AND x.entry_type = (mr_filter_types(p_filter))[1]
         AND x.created_ms < mr_cursor_key(p_before)
       ORDER BY x.created_ms DESC LIMIT 101)
      UNION ALL
      (SELECT x.created_ms, x.entry_id, x.entry_type, x.description, x.delta_available, x.delta_reserved,
              x.cash_value_minor, x.currency, x.merchant_name, x.merchant_id, x.external_tx_id, x.club_id,
              x.group_ref
       FROM ledger_entries x
       WHERE x.member_id = m.member_id AND x.entry_type = (mr_filter_types(p_filter))[2]
         AND x.created_ms < mr_cursor_key(p_before)
       ORDER BY x.created_ms DESC LIMIT 101)
    ) u ORDER BY u.created_ms DESC LIMIT 101) v
    ORDER BY v.created_ms DESC LIMIT p_limit + 1) e ON true
  WHERE m.club_id = p_club_id AND m.external_id = p_member
$function$;
