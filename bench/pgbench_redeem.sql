-- The floor of the redemption line: the redemption transaction the ledger
-- runs (mr_do_redeem), as plain statements, without the idempotency record:
-- lock the member, read its wallet (the payout reference), reserve the cash
-- value from the club's capacity on the club row (the schema's one place
-- for it: every redemption of a club queues on that row until it commits,
-- in the service as here), insert the redemption and its payout, append the
-- redeem_reserve entry, move the points from available to reserved.
-- 1 point at 1 minor unit a point, for distinct members per client
-- (pgb-<client>-<1..16>, as mr_load --redeem), who hold points and wallets.
\set m random(1, 16)
BEGIN;
SELECT member_id FROM members WHERE club_id = :club AND external_id = 'pgb-' || :client_id || '-' || :m FOR UPDATE \gset
SELECT account_number, sort_code, account_name FROM wallets WHERE member_id = :member_id \gset
UPDATE clubs SET cash_capacity_minor = cash_capacity_minor - 1,
                 last_redemption_ms = greatest(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
                                               last_redemption_ms + 1)
WHERE club_id = :club AND cash_capacity_minor >= 1 RETURNING last_redemption_ms AS ms \gset
INSERT INTO redemptions (redemption_id, club_id, member_id, request_id, points, cash_value_minor, currency,
                         created_ms, created_at, updated_at)
VALUES ('rdm_pgb_' || gen_random_uuid(), :club, :member_id, gen_random_uuid()::text, 1, 1, 'GBP', :ms, now(), now())
RETURNING redemption_id \gset
INSERT INTO payouts (payout_id, redemption_id, club_id, account_number, sort_code, account_name)
VALUES ('po_pgb_' || gen_random_uuid(), :redemption_id, :club, :account_number, :sort_code, :account_name);
INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available, delta_reserved,
                            cash_value_minor, currency, group_ref, created_ms)
VALUES ('le_pgb_' || gen_random_uuid(), :member_id, :club, 'redeem_reserve', 'bench', -1, 1, 1, 'GBP', 'x',
        (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);
UPDATE members SET available = available - 1, reserved = reserved + 1 WHERE member_id = :member_id;
END;
