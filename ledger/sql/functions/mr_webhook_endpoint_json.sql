-- Webhook endpoints (partner API). The object as every answer shows it.
CREATE OR REPLACE FUNCTION mr_webhook_endpoint_json(w webhook_endpoints)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object('endpointId', w.endpoint_id, 'url', w.url, 'eventTypes', to_jsonb(w.event_types),
                            'description', w.description, 'status', w.status,
                            'disabledReason', w.disabled_reason, 'createdAt', mr_ts_text(w.created_at),
                            'updatedAt', mr_ts_text(w.updated_at))
$function$;
