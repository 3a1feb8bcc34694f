-- Appends an entry and moves the member's caches with it: one update of
-- the member row takes the next createdAt, strictly increasing even within
-- one millisecond so the cursor pages without gaps or repeats, and applies
-- the deltas.
CREATE OR REPLACE FUNCTION mr_add_entry(p_member_id bigint, p_club_id bigint, p_type text, p_description text, p_available bigint, p_reserved bigint, p_cash bigint, p_currency text, p_merchant_name text, p_merchant_id text, p_external_tx text, p_group text, p_lifetime_earned bigint DEFAULT 0)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_ms bigint;
BEGIN
  UPDATE members SET last_entry_ms = greatest((extract(epoch FROM clock_timestamp()) * 1000)::bigint,
                                              last_entry_ms + 1),
                     available = available + p_available, reserved = reserved + p_reserved,
                     lifetime_earned = lifetime_earned + p_lifetime_earned, updated_at = now()
  WHERE member_id = p_member_id RETURNING last_entry_ms INTO v_ms;
  INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available,
                              delta_reserved, cash_value_minor, currency, merchant_name, merchant_id,
                              external_tx_id, group_ref, created_ms)
  VALUES ('le_' || lpad(to_hex(v_ms), 12, '0') || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12),
          p_member_id, p_club_id, p_type, p_description, p_available, p_reserved, p_cash, p_currency,
          p_merchant_name, p_merchant_id, p_external_tx, p_group, v_ms);
  RETURN v_ms;
END $function$;
