-- mrctl audit --club's summary: the club's members and their entries,
-- counted through the indexes (as mr_audit_club, no sequential scan).
CREATE OR REPLACE FUNCTION mr_club_counts(p_club_id bigint)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET enable_seqscan TO 'off'
 SET jit TO 'off'
AS $function$
  SELECT jsonb_build_object('members', count(*), 'entries', coalesce(sum(e.n), 0))
  FROM members m CROSS JOIN LATERAL (SELECT count(*) AS n FROM ledger_entries x WHERE x.member_id = m.member_id) e
  WHERE m.club_id = p_club_id
$function$;
