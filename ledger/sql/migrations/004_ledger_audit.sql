-- A wider audit (mrctl audit). 002's checks stay: member balances = sum of
-- entries, lifetime earned = award and reversal entries, club books
-- (pool + members' available + reserved + burned = funded). Added: the
-- other caches the books rely on, each compared with the rows it sums, so a
-- difference is named where it starts rather than only as a club total:
-- lifetime redeemed and burned points against burn entries, reserved
-- points against pending redemptions, each transaction's points and
-- reversed totals against its entries and reversal rows, and every club's
-- 16 pool stripes.
CREATE OR REPLACE FUNCTION mr_audit() RETURNS SETOF text LANGUAGE sql STABLE AS $$
  SELECT format('member %s of club %s: balances %s/%s, entries sum to %s/%s', m.external_id, c.partner_ref,
                m.available, m.reserved, coalesce(e.avail, 0), coalesce(e.res, 0))
  FROM members m JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, sum(delta_available) AS avail, sum(delta_reserved) AS res
             FROM ledger_entries GROUP BY member_id) e USING (member_id)
  WHERE m.available <> coalesce(e.avail, 0) OR m.reserved <> coalesce(e.res, 0)
  UNION ALL
  SELECT format('member %s of club %s: lifetime earned %s, award entries sum to %s', m.external_id,
                c.partner_ref, m.lifetime_earned, coalesce(e.earned, 0))
  FROM members m JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, sum(delta_available) AS earned FROM ledger_entries
             WHERE entry_type IN ('earn_award', 'earn_reversal') GROUP BY member_id) e USING (member_id)
  WHERE m.lifetime_earned <> coalesce(e.earned, 0)
  UNION ALL
  SELECT format('member %s of club %s: lifetime redeemed %s, burn entries sum to %s', m.external_id,
                c.partner_ref, m.lifetime_redeemed, coalesce(e.burned, 0))
  FROM members m JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, -sum(delta_reserved) AS burned FROM ledger_entries
             WHERE entry_type = 'redeem_burn' GROUP BY member_id) e USING (member_id)
  WHERE m.lifetime_redeemed <> coalesce(e.burned, 0)
  UNION ALL
  SELECT format('member %s of club %s: reserved %s, pending redemptions hold %s', m.external_id,
                c.partner_ref, m.reserved, coalesce(p.held, 0))
  FROM members m JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, sum(points) AS held FROM redemptions
             WHERE status = 'payout_pending' GROUP BY member_id) p USING (member_id)
  WHERE m.reserved <> coalesce(p.held, 0)
  UNION ALL
  SELECT format('club %s: burned %s, members redeemed %s', c.partner_ref, c.burned_points, coalesce(m.redeemed, 0))
  FROM clubs c
  LEFT JOIN (SELECT club_id, sum(lifetime_redeemed) AS redeemed FROM members GROUP BY club_id) m USING (club_id)
  WHERE c.burned_points <> coalesce(m.redeemed, 0)
  UNION ALL
  SELECT format('club %s: %s pool stripes, not 16', c.partner_ref, count(s.stripe))
  FROM clubs c LEFT JOIN club_pool_stripes s USING (club_id)
  GROUP BY c.club_id, c.partner_ref HAVING count(s.stripe) <> 16
  UNION ALL
  SELECT format('club %s: pool %s + members %s + burned %s <> funded %s', c.partner_ref, coalesce(p.pool, 0),
                coalesce(m.held, 0), c.burned_points, c.funded_points)
  FROM clubs c
  LEFT JOIN (SELECT club_id, sum(points) AS pool FROM club_pool_stripes GROUP BY club_id) p USING (club_id)
  LEFT JOIN (SELECT club_id, sum(available + reserved) AS held FROM members GROUP BY club_id) m USING (club_id)
  WHERE coalesce(p.pool, 0) + coalesce(m.held, 0) + c.burned_points <> c.funded_points
  UNION ALL
  SELECT format('transaction %s of club %s: points %s/reversed %s, entries %s/%s; amount reversed %s, reversal rows %s/%s',
                t.external_id, c.partner_ref, t.points, t.reversed_points, coalesce(e.award, 0),
                coalesce(e.reversal, 0), t.reversed_amount, coalesce(r.amount, 0), coalesce(r.points, 0))
  FROM transactions t JOIN clubs c USING (club_id)
  LEFT JOIN (SELECT member_id, external_tx_id,
                    sum(delta_available) FILTER (WHERE entry_type = 'earn_award') AS award,
                    -sum(delta_available) FILTER (WHERE entry_type = 'earn_reversal') AS reversal
             FROM ledger_entries WHERE entry_type IN ('earn_award', 'earn_reversal')
             GROUP BY member_id, external_tx_id) e
    ON e.member_id = t.member_id AND e.external_tx_id = t.external_id
  LEFT JOIN (SELECT tx_id, sum(amount_minor) AS amount, sum(points) AS points FROM reversals GROUP BY tx_id) r
    USING (tx_id)
  WHERE e.award IS DISTINCT FROM t.points OR coalesce(e.reversal, 0) <> t.reversed_points
     OR coalesce(r.amount, 0) <> t.reversed_amount OR coalesce(r.points, 0) <> t.reversed_points
$$;
