-- The club move's reads and removals through the indexes
-- (tools/mrctl/cmd_club_move.cpp). A club's ledger entries and payouts
-- found by club_id, which no index of theirs leads with, would be a
-- sequential scan of the pod's every entry inside the move's pause, growing
-- with the pod rather than with the club. Here entries are reached through
-- the club's members (UNIQUE (club_id, external_id)) and each member's
-- (member_id, created_ms) index, and payouts through the club's redemptions
-- (redemptions_club_created) and their UNIQUE (redemption_id), as
-- mr_audit_club reads them; no index is added, so a settle writes no more
-- than it must. Webhook deliveries are found by club_id: no index reaches
-- them from the club without one more index on the table every settle of a
-- club with an endpoint inserts into. tests/sql/club_move_plans.sql shows
-- the plans.
CREATE OR REPLACE FUNCTION mr_club_summary(p_club_id bigint)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SET jit TO 'off'
AS $function$
  SELECT jsonb_build_object(
    'club', (SELECT to_jsonb(c) - 'pod' - 'moving' - 'updated_at' - 'created_at' FROM clubs c WHERE club_id = p_club_id),
    'pool', (SELECT sum(points) FROM club_pool_stripes WHERE club_id = p_club_id),
    'members', (SELECT jsonb_build_array(count(*), sum(available), sum(reserved), sum(lifetime_earned),
                                         sum(lifetime_redeemed), sum(event_seq))
                FROM members WHERE club_id = p_club_id),
    'wallets', (SELECT count(*) FROM wallets JOIN members USING (member_id) WHERE club_id = p_club_id),
    'transactions', (SELECT jsonb_build_array(count(*), sum(points), sum(reversed_points))
                     FROM transactions WHERE club_id = p_club_id),
    'reversals', (SELECT count(*) FROM reversals JOIN transactions USING (tx_id) WHERE club_id = p_club_id),
    'entries', (SELECT jsonb_build_array(count(*), sum(e.delta_available), sum(e.delta_reserved))
                FROM members m JOIN ledger_entries e ON e.member_id = m.member_id WHERE m.club_id = p_club_id),
    'idempotency', (SELECT count(*) FROM idempotency_records WHERE club_id = p_club_id),
    'redemptions', (SELECT count(*) FROM redemptions WHERE club_id = p_club_id),
    'payouts', (SELECT count(*) FROM redemptions r JOIN payouts p ON p.redemption_id = r.redemption_id
                WHERE r.club_id = p_club_id),
    'events', (SELECT count(*) FROM events WHERE club_id = p_club_id),
    'endpoints', (SELECT count(*) FROM webhook_endpoints WHERE club_id = p_club_id),
    'deliveries', (SELECT count(*) FROM webhook_deliveries WHERE club_id = p_club_id),
    'attempts', (SELECT count(*) FROM webhook_attempts JOIN webhook_endpoints USING (endpoint_id)
                 WHERE club_id = p_club_id))
$function$;
