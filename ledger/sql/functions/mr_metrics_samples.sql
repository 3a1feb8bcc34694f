-- /metrics over pods: the books' gauges as samples (family, labels, value)
-- rather than text, so that the modules write each family's HELP and TYPE
-- once and every pod's samples under it, each labelled with its pod
-- (ledger/books_metrics.cpp). The figures and their bounded reads are
-- mr_metrics()'s and mr_webhook_backlog()'s. The clubs are those whose books
-- this database keeps (clubs.pod IS NULL): the catalogue's rows of clubs in
-- other pods hold no books here, and a pod's copy of its clubs' rows has no
-- pod.
CREATE OR REPLACE FUNCTION mr_metrics_samples()
 RETURNS TABLE(family text, labels text, value text)
 LANGUAGE sql
 STABLE
AS $function$
  SELECT 'mr_payouts_open', format('status="%s"', s), (SELECT count(*) FROM payouts p WHERE p.status = s)::text
    FROM unnest(ARRAY['created', 'submitted']) s
  UNION ALL
  SELECT 'mr_payouts_oldest_open_age_seconds', format('status="%s"', s),
         coalesce((SELECT round(extract(epoch FROM now() - min(p.created_at)), 3) FROM payouts p WHERE p.status = s),
                  0)::text
    FROM unnest(ARRAY['created', 'submitted']) s
  UNION ALL
  SELECT 'mr_payouts_estimated', format('status="%s"', e.value), e.estimate::text
    FROM mr_rows_by_value_estimated('payouts', 'status', ARRAY['created', 'submitted', 'succeeded', 'failed']) e
  UNION ALL
  SELECT 'mr_members_estimated', format('status="%s"', e.value), e.estimate::text
    FROM mr_rows_by_value_estimated('members', 'status', ARRAY['active', 'closed']) e
  UNION ALL
  SELECT 'mr_ledger_entries_estimated', '', mr_rows_estimated('ledger_entries')::text
  UNION ALL
  SELECT 'mr_club_points_pool', format('partner_ref="%s"', mr_prom_label(c.partner_ref)),
         mr_pool_total(c.club_id)::text
    FROM clubs c WHERE c.pod IS NULL
  UNION ALL
  SELECT 'mr_club_cash_capacity_minor', format('partner_ref="%s"', mr_prom_label(c.partner_ref)),
         c.cash_capacity_minor::text
    FROM clubs c WHERE c.pod IS NULL
  UNION ALL
  SELECT 'mr_webhook_backlog', '', b.pending::text FROM mr_webhook_backlog() b
  UNION ALL
  SELECT 'mr_webhook_backlog_oldest_seconds', '',
         to_char(greatest(coalesce(b.oldest_due_age_ms, 0), 0) / 1000.0, 'FM999999999990.000')
    FROM mr_webhook_backlog() b
$function$;
