-- The idempotency lock on the full 64-bit club id, and every function
-- defined after the functions it calls. Migrations never change once
-- applied, so both are redefinitions here (CREATE OR REPLACE: same
-- signature, same grants, sessions pick the new body up on their next call).
--
-- mr_write took pg_advisory_xact_lock(p_club_id::int, hashtext(p_idem_key)):
-- the cast raises "integer out of range" for a club id above 2^31 - 1, so
-- every write of such a club failed. It now takes the one-key (bigint) form
-- on a 64-bit hash of the whole pair, club id first:
-- hashtextextended(club_id || ':' || key, 0). The club id is digits only,
-- so the first ':' ends it: two different pairs never give the same text. The two-key form was not taken: its keys are int4, so the club id
-- would still have to be cut or hashed to 32 bits, and the key to the other
-- 32; one 64-bit hash of the pair spreads all 64 bits over both. A
-- collision (about 2^-64 per pair of pairs) only makes two unrelated
-- requests wait for each other; the answer always comes from the
-- idempotency record, never from the lock. mrctl migrate's lock (727274) is
-- in the same one-key space; meeting it by chance costs a wait, no more.
--
-- Order: mr_write in 002 dispatched to mr_do_redeem and mr_do_close,
-- defined only in 003, and mr_points called mr_page, defined after it.
-- PL/pgSQL resolves calls when it runs, so nothing failed, but a reader (or
-- a LANGUAGE sql body, checked at CREATE) must find what a function calls
-- above it. Both are redefined here, unchanged apart from the lock.

-- GET /api/v1/members/{id}/points (002), now after mr_page.
CREATE OR REPLACE FUNCTION mr_points(p_club_id bigint, p_member text, p_filter text, p_limit int,
                                     p_before bigint, p_request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v_member_id bigint;
  v_types text[] := mr_filter_types(p_filter);
  v_rows jsonb;
  v_ms bigint[];
BEGIN
  SELECT member_id INTO v_member_id FROM members WHERE club_id = p_club_id AND external_id = p_member;
  IF v_member_id IS NULL THEN RETURN mr_fail('cardholder_not_found', p_request_id); END IF;
  SELECT coalesce(jsonb_agg(e ORDER BY ms DESC), '[]'::jsonb), array_agg(ms ORDER BY ms DESC)
    INTO v_rows, v_ms FROM (
    SELECT created_ms AS ms, jsonb_build_object(
      'id', entry_id, 'entryType', entry_type, 'description', description,
      'pointsDelta', delta_available + delta_reserved, 'pointsDeltaAvailable', delta_available,
      'pointsDeltaReserved', delta_reserved, 'cashValueMinor', cash_value_minor, 'currency', currency,
      'createdAt', mr_ms_text(created_ms), 'merchantName', merchant_name, 'merchantId', merchant_id,
      'externalTransactionId', external_tx_id, 'ledgerGroupId', club_id || ':' || group_ref) AS e
    FROM ledger_entries
    WHERE member_id = v_member_id AND (p_before IS NULL OR created_ms < p_before)
      AND (v_types IS NULL OR entry_type = ANY (v_types))
    ORDER BY created_ms DESC LIMIT p_limit + 1) page;
  RETURN mr_page(v_rows, v_ms, p_limit, p_request_id);
END $$;

-- Every points-changing request (002; here after everything it calls):
-- take the club's idempotency key, do the work, keep the result, all in the
-- caller's one transaction. A transaction-scoped advisory lock on (club id,
-- key) makes a concurrent request with the same key wait until this one
-- commits and then read its result; the record is written once, at the
-- end. Every outcome decided here is kept.
CREATE OR REPLACE FUNCTION mr_write(p_op text, p_club_id bigint, p_partner_ref text, p_idem_key text,
                                    p_fingerprint text, p_request_id text, p_cmd jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_record idempotency_records%ROWTYPE;
  v_result jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_club_id::text || ':' || p_idem_key, 0));
  SELECT * INTO v_record FROM idempotency_records WHERE club_id = p_club_id AND idem_key = p_idem_key;
  IF FOUND THEN
    IF v_record.fingerprint <> p_fingerprint THEN
      RETURN mr_fail('duplicate_idempotency_conflict', p_request_id);
    END IF;
    RETURN v_record.result || '{"replayed": true}';
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
  ELSE
    RAISE EXCEPTION 'unknown operation %', p_op;
  END IF;
  -- invalid_request is not kept: the client may fix the request and retry.
  IF v_result->>'outcome' <> 'invalid_request' THEN
    INSERT INTO idempotency_records (club_id, idem_key, fingerprint, result)
    VALUES (p_club_id, p_idem_key, p_fingerprint, v_result);
  END IF;
  RETURN v_result;
END $$;
