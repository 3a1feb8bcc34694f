-- The advisory lock a signature's writers share (mr_write and both batch
-- functions), taken after the idempotency key's: two requests with one
-- signature under two keys wait for each other, and the second is refused.
CREATE OR REPLACE FUNCTION mr_signature_lock_key(p_signature bytea)
 RETURNS bigint
 LANGUAGE sql
 IMMUTABLE STRICT
AS $function$
  SELECT hashtextextended('sig:' || encode(p_signature, 'hex'), 0)
$function$;
