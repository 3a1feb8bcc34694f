CREATE OR REPLACE FUNCTION mr_club_export(p_club_id bigint)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SET jit TO 'off'
AS $function$
  SELECT jsonb_build_object(
    'club', (SELECT to_jsonb(c) FROM clubs c WHERE club_id = p_club_id),
    'stripes', (SELECT coalesce(jsonb_agg(to_jsonb(s)), '[]') FROM club_pool_stripes s WHERE club_id = p_club_id),
    'members', (SELECT coalesce(jsonb_agg(to_jsonb(m) ORDER BY member_id), '[]') FROM members m
                WHERE club_id = p_club_id),
    'wallets', (SELECT coalesce(jsonb_agg(to_jsonb(w)), '[]') FROM wallets w JOIN members m USING (member_id)
                WHERE m.club_id = p_club_id),
    'transactions', (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY tx_id), '[]') FROM transactions t
                     WHERE club_id = p_club_id),
    'reversals', (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY reversal_id), '[]')
                  FROM reversals r JOIN transactions t USING (tx_id) WHERE t.club_id = p_club_id),
    'entries', (SELECT coalesce(jsonb_agg(to_jsonb(e)), '[]')
                FROM members m JOIN ledger_entries e ON e.member_id = m.member_id WHERE m.club_id = p_club_id),
    'idempotency', (SELECT coalesce(jsonb_agg(to_jsonb(i)), '[]') FROM idempotency_records i
                    WHERE club_id = p_club_id),
    'redemptions', (SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') FROM redemptions r WHERE club_id = p_club_id),
    'payouts', (SELECT coalesce(jsonb_agg(to_jsonb(p)), '[]')
                FROM redemptions r JOIN payouts p ON p.redemption_id = r.redemption_id WHERE r.club_id = p_club_id),
    'events', (SELECT coalesce(jsonb_agg(to_jsonb(e) || jsonb_build_object(
                                 'cursor', mr_event_cursor(e.xid, e.event_no, e.created_at))
                               ORDER BY e.xid, e.event_no), '[]')
               FROM events e WHERE club_id = p_club_id),
    'aliases', (SELECT coalesce(jsonb_agg(to_jsonb(a)), '[]') FROM event_cursor_aliases a
                WHERE club_id = p_club_id),
    'endpoints', (SELECT coalesce(jsonb_agg(to_jsonb(w)), '[]') FROM webhook_endpoints w WHERE club_id = p_club_id),
    'deliveries', (SELECT coalesce(jsonb_agg(to_jsonb(d) ORDER BY delivery_id), '[]') FROM webhook_deliveries d
                   WHERE club_id = p_club_id),
    'attempts', (SELECT coalesce(jsonb_agg(to_jsonb(a)), '[]')
                 FROM webhook_attempts a JOIN webhook_endpoints w USING (endpoint_id) WHERE w.club_id = p_club_id))
$function$;
