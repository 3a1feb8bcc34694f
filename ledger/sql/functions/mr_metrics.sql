CREATE OR REPLACE FUNCTION mr_metrics()
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT concat_ws(E'\n',
    '# HELP mr_books_up Whether the books'' gauges below could be read.', '# TYPE mr_books_up gauge',
    'mr_books_up 1',
    '# HELP mr_payouts_open Payouts not finished, by status (exact; an index bounds it by the backlog).',
    '# TYPE mr_payouts_open gauge',
    (SELECT string_agg(format('mr_payouts_open{status="%s"} %s', s, (SELECT count(*) FROM payouts p WHERE p.status = s)), E'\n')
     FROM unnest(ARRAY['created', 'submitted']) s),
    '# HELP mr_payouts_oldest_open_age_seconds Age of the oldest payout in each open status (0: none).',
    '# TYPE mr_payouts_oldest_open_age_seconds gauge',
    (SELECT string_agg(format('mr_payouts_oldest_open_age_seconds{status="%s"} %s', s,
       coalesce((SELECT round(extract(epoch FROM now() - min(p.created_at)), 3) FROM payouts p WHERE p.status = s), 0)), E'\n')
     FROM unnest(ARRAY['created', 'submitted']) s),
    '# HELP mr_payouts_estimated Payouts by status, estimated from planner statistics (last ANALYZE).',
    '# TYPE mr_payouts_estimated gauge',
    (SELECT string_agg(format('mr_payouts_estimated{status="%s"} %s', value, estimate), E'\n')
     FROM mr_rows_by_value_estimated('payouts', 'status', ARRAY['created', 'submitted', 'succeeded', 'failed'])),
    '# HELP mr_members_estimated Members by status, estimated from planner statistics (last ANALYZE).',
    '# TYPE mr_members_estimated gauge',
    (SELECT string_agg(format('mr_members_estimated{status="%s"} %s', value, estimate), E'\n')
     FROM mr_rows_by_value_estimated('members', 'status', ARRAY['active', 'closed'])),
    '# HELP mr_ledger_entries_estimated Ledger entries, as PostgreSQL''s statistics count live rows.',
    '# TYPE mr_ledger_entries_estimated gauge',
    'mr_ledger_entries_estimated ' || mr_rows_estimated('ledger_entries'),
    '# HELP mr_club_points_pool Points left in each club''s pool.', '# TYPE mr_club_points_pool gauge',
    (SELECT string_agg(format('mr_club_points_pool{partner_ref="%s"} %s', mr_prom_label(c.partner_ref), mr_pool_total(c.club_id)), E'\n')
     FROM clubs c),
    '# HELP mr_club_cash_capacity_minor Cash capacity left per club.', '# TYPE mr_club_cash_capacity_minor gauge',
    (SELECT string_agg(format('mr_club_cash_capacity_minor{partner_ref="%s"} %s', mr_prom_label(c.partner_ref), c.cash_capacity_minor), E'\n')
     FROM clubs c)) || E'\n'
$function$;
