-- GET /api/v1/members/{id}/transactions: settled rows from
-- transactions_member and reversal rows from reversals_member, merged. A
-- settled row has tx_id NULL (its lookup finds nothing at once) and its own
-- merchant fields; a reversal row takes its transaction's. settled_at is
-- NULL on reversal rows.
CREATE OR REPLACE FUNCTION mr_transactions_rows(p_club_id bigint, p_member text, p_limit integer, p_before bigint)
 RETURNS TABLE(created_ms bigint, reversed boolean, external_id text, event_id text, merchant_id text, merchant_name text, amount_minor bigint, currency character, points_delta bigint, occurred_at timestamp with time zone, settled_at timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT p.ms, p.reversed, coalesce(t.external_id, p.external_id), p.event_id, coalesce(t.merchant_id, p.merchant_id),
         coalesce(t.merchant_name, p.merchant_name), p.amount_minor, coalesce(t.currency, p.currency), p.points_delta,
         p.occurred_at, p.settled_at
  FROM members m
  LEFT JOIN LATERAL (
    SELECT * FROM (SELECT * FROM (
      (SELECT x.created_ms AS ms, false AS reversed, NULL::bigint AS tx_id, x.external_id, x.event_id,
              x.merchant_id, x.merchant_name, x.amount_minor, x.currency, x.points AS points_delta,
              x.occurred_at, x.settled_at
       FROM transactions x
       WHERE x.member_id = m.member_id AND x.created_ms < mr_cursor_key(p_before)
       ORDER BY x.created_ms DESC LIMIT 101)
      UNION ALL
      (SELECT y.created_ms, true, y.tx_id, NULL, y.event_id, NULL, NULL, y.amount_minor, NULL, -y.points,
              y.occurred_at, NULL
       FROM reversals y
       WHERE y.member_id = m.member_id AND y.created_ms < mr_cursor_key(p_before)
       ORDER BY y.created_ms DESC LIMIT 101)
    ) u ORDER BY u.ms DESC LIMIT 101) v
    ORDER BY v.ms DESC LIMIT p_limit + 1) p ON true
  LEFT JOIN LATERAL (
    SELECT z.external_id, z.merchant_id, z.merchant_name, z.currency FROM transactions z
    WHERE z.tx_id = p.tx_id LIMIT 1) t ON true
  WHERE m.club_id = p_club_id AND m.external_id = p_member
$function$;
