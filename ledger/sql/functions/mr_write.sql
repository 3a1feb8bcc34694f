-- mr_write: a moving club's pause first, then the key. p_signature: the
-- MAC of the request's X-MR-Signature, which serves one idempotency key
-- (contract section 2):
-- kept with the record (a unique index), and refused under another key as
-- invalid_signature before anything is applied. Its advisory lock comes
-- after the key's, in every writer (the batches too), so two requests with
-- one signature and two keys wait for each other and one of them is
-- refused. NULL: not checked (callers other than the edge).
CREATE OR REPLACE FUNCTION mr_write(p_op text, p_club_id bigint, p_partner_ref text, p_idem_key text, p_fingerprint text, p_request_id text, p_cmd jsonb, p_signature bytea DEFAULT NULL::bytea)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  v_record idempotency_records%ROWTYPE;
  v_result jsonb;
BEGIN
  PERFORM mr_refuse_moving(p_club_id);
  PERFORM pg_advisory_xact_lock(hashtextextended(p_club_id::text || ':' || p_idem_key, 0));
  SELECT * INTO v_record FROM idempotency_records WHERE club_id = p_club_id AND idem_key = p_idem_key;
  IF FOUND THEN
    IF v_record.fingerprint <> p_fingerprint THEN
      RETURN mr_fail('duplicate_idempotency_conflict', p_request_id);
    END IF;
    RETURN v_record.result || '{"replayed": true}';
  END IF;
  IF p_signature IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(mr_signature_lock_key(p_signature));
    IF EXISTS (SELECT 1 FROM idempotency_records WHERE signature = p_signature) THEN
      RETURN mr_fail('invalid_signature', p_request_id,
                     'This signature was already used with another X-MR-Idempotency-Key; sign the request again.');
    END IF;
  END IF;
  IF p_cmd->>'partnerRef' IS DISTINCT FROM p_partner_ref THEN
    v_result := mr_fail('partner_not_found', p_request_id);
  ELSIF p_op = 'member' THEN
    v_result := mr_do_member(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'settle' THEN
    v_result := mr_do_settle(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'reverse' THEN
    v_result := mr_do_reverse(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'redeem' THEN
    v_result := mr_do_redeem(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'close' THEN
    v_result := mr_do_close(p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'webhook_create' THEN
    v_result := mr_do_webhook_create(p_club_id, p_request_id, p_cmd);
  ELSIF p_op IN ('webhook_update', 'webhook_rotate', 'webhook_delete', 'webhook_replay') THEN
    v_result := mr_do_webhook_endpoint(p_op, p_club_id, p_request_id, p_cmd);
  ELSIF p_op = 'test_payout' THEN
    v_result := mr_do_test_payout(p_club_id, p_request_id, p_cmd);
  ELSE
    RAISE EXCEPTION 'unknown operation %', p_op;
  END IF;
  IF v_result->>'outcome' IN ('ok', 'created', 'updated', 'accepted') THEN
    PERFORM mr_emit_write(p_op, p_club_id, p_cmd, v_result);
  END IF;
  -- invalid_request is not kept: the client may fix the request and retry.
  IF v_result->>'outcome' <> 'invalid_request' THEN
    INSERT INTO idempotency_records (club_id, idem_key, fingerprint, result, signature)
    VALUES (p_club_id, p_idem_key, p_fingerprint, v_result, p_signature);
  END IF;
  RETURN v_result;
END $function$;
