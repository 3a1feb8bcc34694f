-- mrctl audit --club: the audit of one club, reading only that club's rows
-- (its members by UNIQUE (club_id, external_id), their entries, reversals
-- and pending redemptions by member, its transactions by UNIQUE (club_id,
-- external_id) and their reversal rows by reversals_tx, its 16 stripes), so
-- its cost follows the club's size, not the whole books'. The checks and
-- messages are mr_audit's, club by club.
--
-- Planned for this club at every call (EXECUTE): a cached generic plan
-- assumes an average club and reads the whole books for a small one.
-- Without sequential scans: a member's rows are summed through its index,
-- never by scanning the table, even where the statistics' average member is
-- huge (a small club next to one enormous member would otherwise scan the
-- whole ledger_entries once per member). Without JIT: those statistics make
-- the plan look expensive enough to compile, and compiling would cost more
-- than the audit itself.
CREATE OR REPLACE FUNCTION mr_audit_club(p_club_id bigint)
 RETURNS SETOF text
 LANGUAGE plpgsql
 STABLE
 SET enable_seqscan TO 'off'
 SET jit TO 'off'
AS $function$
BEGIN
  RETURN QUERY EXECUTE $q$
    WITH c AS (SELECT * FROM clubs WHERE club_id = $1),
    m AS (
      SELECT m.member_id, m.external_id, m.available, m.reserved, m.lifetime_earned, m.lifetime_redeemed,
             coalesce(e.avail, 0) AS e_avail, coalesce(e.res, 0) AS e_res, coalesce(e.earned, 0) AS e_earned,
             coalesce(e.burned, 0) AS e_burned, coalesce(p.held, 0) AS held
      FROM members m
      CROSS JOIN LATERAL (
        SELECT sum(delta_available) AS avail, sum(delta_reserved) AS res,
               sum(delta_available) FILTER (WHERE entry_type IN ('earn_award', 'earn_reversal')) AS earned,
               -sum(delta_reserved) FILTER (WHERE entry_type = 'redeem_burn') AS burned
        FROM ledger_entries WHERE member_id = m.member_id) e
      CROSS JOIN LATERAL (
        SELECT sum(points) AS held FROM redemptions WHERE member_id = m.member_id AND status = 'payout_pending') p
      WHERE m.club_id = $1)
    SELECT format('member %s of club %s: balances %s/%s, entries sum to %s/%s', m.external_id, c.partner_ref,
                  m.available, m.reserved, m.e_avail, m.e_res)
    FROM m, c WHERE m.available <> m.e_avail OR m.reserved <> m.e_res
    UNION ALL
    SELECT format('member %s of club %s: lifetime earned %s, award entries sum to %s', m.external_id,
                  c.partner_ref, m.lifetime_earned, m.e_earned)
    FROM m, c WHERE m.lifetime_earned <> m.e_earned
    UNION ALL
    SELECT format('member %s of club %s: lifetime redeemed %s, burn entries sum to %s', m.external_id,
                  c.partner_ref, m.lifetime_redeemed, m.e_burned)
    FROM m, c WHERE m.lifetime_redeemed <> m.e_burned
    UNION ALL
    SELECT format('member %s of club %s: reserved %s, pending redemptions hold %s', m.external_id,
                  c.partner_ref, m.reserved, m.held)
    FROM m, c WHERE m.reserved <> m.held
    UNION ALL
    SELECT format('club %s: burned %s, members redeemed %s', c.partner_ref, c.burned_points,
                  (SELECT coalesce(sum(lifetime_redeemed), 0) FROM m))
    FROM c WHERE c.burned_points <> (SELECT coalesce(sum(lifetime_redeemed), 0) FROM m)
    UNION ALL
    SELECT format('club %s: %s pool stripes, not 16', c.partner_ref, s.n)
    FROM c, (SELECT count(*) AS n FROM club_pool_stripes WHERE club_id = $1) s WHERE s.n <> 16
    UNION ALL
    SELECT format('club %s: pool %s + members %s + burned %s <> funded %s', c.partner_ref, p.pool, h.held,
                  c.burned_points, c.funded_points)
    FROM c, (SELECT coalesce(sum(points), 0) AS pool FROM club_pool_stripes WHERE club_id = $1) p,
         (SELECT coalesce(sum(available + reserved), 0) AS held FROM m) h
    WHERE p.pool + h.held + c.burned_points <> c.funded_points
    UNION ALL
    SELECT format('transaction %s of club %s: points %s/reversed %s, entries %s/%s; amount reversed %s, reversal rows %s/%s',
                  t.external_id, c.partner_ref, t.points, t.reversed_points, coalesce(e.award, 0),
                  coalesce(e.reversal, 0), t.reversed_amount, coalesce(r.amount, 0), coalesce(r.points, 0))
    FROM c, transactions t
    LEFT JOIN (SELECT x.member_id, x.external_tx_id,
                      sum(x.delta_available) FILTER (WHERE x.entry_type = 'earn_award') AS award,
                      -sum(x.delta_available) FILTER (WHERE x.entry_type = 'earn_reversal') AS reversal
               FROM m JOIN ledger_entries x ON x.member_id = m.member_id
               WHERE x.entry_type IN ('earn_award', 'earn_reversal')
               GROUP BY x.member_id, x.external_tx_id) e
      ON e.member_id = t.member_id AND e.external_tx_id = t.external_id
    LEFT JOIN (SELECT y.tx_id, sum(y.amount_minor) AS amount, sum(y.points) AS points
               FROM transactions x JOIN reversals y ON y.tx_id = x.tx_id
               WHERE x.club_id = $1 GROUP BY y.tx_id) r ON r.tx_id = t.tx_id
    WHERE t.club_id = $1
      AND (e.award IS DISTINCT FROM t.points OR coalesce(e.reversal, 0) <> t.reversed_points
           OR coalesce(r.amount, 0) <> t.reversed_amount OR coalesce(r.points, 0) <> t.reversed_points)
  $q$ USING p_club_id;
END $function$;
