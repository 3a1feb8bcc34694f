-- duplicate_request_id with the first redemption's id: a member of the
-- result beside "message", which the domain renders as error.redemptionId.
CREATE OR REPLACE FUNCTION mr_fail_duplicate_request(p_request_id text, p_redemption text)
 RETURNS jsonb
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT mr_fail('duplicate_request_id', p_request_id) || jsonb_build_object('redemptionId', p_redemption)
$function$;
