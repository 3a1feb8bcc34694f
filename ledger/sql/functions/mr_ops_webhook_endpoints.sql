-- Operators (mrctl, the ops listener): a club's endpoints with their
-- queues, failed attempts, and manual enable/disable.
CREATE OR REPLACE FUNCTION mr_ops_webhook_endpoints(p_ref text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce(jsonb_agg(mr_webhook_endpoint_json(w) || jsonb_build_object(
           'partnerRef', c.partner_ref,
           'pending', (SELECT count(*) FROM webhook_deliveries d
                       WHERE d.endpoint_id = w.endpoint_id AND d.state IN ('pending', 'paused')))
           ORDER BY c.partner_ref, w.created_at), '[]'::jsonb)
  FROM webhook_endpoints w JOIN clubs c USING (club_id)
  WHERE w.status <> 'deleted' AND (p_ref IS NULL OR c.partner_ref = p_ref)
$function$;
