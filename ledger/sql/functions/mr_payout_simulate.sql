-- The sandbox's payout simulator, leaving a moving club's payouts to the
-- target pod (raising would stop every other club's payouts too).
CREATE OR REPLACE FUNCTION mr_payout_simulate(p_delay_ms bigint, p_batch integer DEFAULT 50)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  r record;
  n int := 0;
BEGIN
  FOR r IN SELECT payout_id, account_number FROM payouts p
           WHERE status IN ('created', 'submitted')
             AND created_at <= clock_timestamp() - p_delay_ms * interval '1 millisecond'
             AND NOT EXISTS (SELECT 1 FROM clubs c WHERE c.club_id = p.club_id AND c.moving)
           ORDER BY created_at LIMIT p_batch FOR UPDATE OF p SKIP LOCKED LOOP
    IF r.account_number = '00000000' THEN
      PERFORM mr_payout_move(r.payout_id, 'failed', 'simulated: the bank rejected account 00000000');
    ELSE
      PERFORM mr_payout_move(r.payout_id, 'succeeded');
    END IF;
    n := n + 1;
  END LOOP;
  RETURN n;
END $function$;
