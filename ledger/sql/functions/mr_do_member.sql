-- POST /api/v1/members
CREATE OR REPLACE FUNCTION mr_do_member(p_club_id bigint, p_request_id text, p_cmd jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_member members%ROWTYPE;
  v_outcome text := 'created';
  v_wallet jsonb := p_cmd->'wallet';
BEGIN
  INSERT INTO members (club_id, external_id, first_name, last_name, email)
  VALUES (p_club_id, p_cmd->>'externalMemberId', p_cmd->>'firstName', p_cmd->>'lastName', p_cmd->>'email')
  ON CONFLICT (club_id, external_id) DO NOTHING
  RETURNING * INTO v_member;
  IF v_member.member_id IS NULL THEN
    v_outcome := 'updated';
    SELECT * INTO v_member FROM members
    WHERE club_id = p_club_id AND external_id = p_cmd->>'externalMemberId' FOR UPDATE;
    IF v_member.status = 'closed' THEN RETURN mr_fail('member_closed', p_request_id); END IF;
    UPDATE members SET first_name = p_cmd->>'firstName', last_name = p_cmd->>'lastName',
                       email = p_cmd->>'email', updated_at = now()
    WHERE member_id = v_member.member_id;
  END IF;
  IF v_wallet IS NOT NULL THEN
    INSERT INTO wallets (member_id, provider, wallet_ref, status, account_number, sort_code, account_name)
    VALUES (v_member.member_id, v_wallet->>'provider', v_wallet->>'walletRef', v_wallet->>'status',
            v_wallet->'bankAccount'->>'accountNumber', v_wallet->'bankAccount'->>'sortCode',
            v_wallet->'bankAccount'->>'name')
    ON CONFLICT (member_id) DO UPDATE SET provider = EXCLUDED.provider, wallet_ref = EXCLUDED.wallet_ref,
      status = EXCLUDED.status, account_number = EXCLUDED.account_number, sort_code = EXCLUDED.sort_code,
      account_name = EXCLUDED.account_name, updated_at = now();
  END IF;
  RETURN mr_ok(v_outcome, p_request_id, jsonb_build_object(
    'externalMemberId', v_member.external_id, 'status', v_outcome,
    'payoutReady', mr_payout_ready(v_member.member_id)));
END $function$;
