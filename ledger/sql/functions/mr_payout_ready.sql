CREATE OR REPLACE FUNCTION mr_payout_ready(p_member_id bigint)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
  SELECT coalesce((SELECT account_number ~ '^[0-9]{8}$' AND sort_code ~ '^[0-9]{6}$'
                          AND coalesce(account_name, '') <> ''
                          AND coalesce(status, '') NOT IN ('suspended', 'closed')
                   FROM wallets WHERE member_id = p_member_id), false)
$function$;
