-- mrctl audit: every club's audit. Every row belongs to a member or a club,
-- so this covers the whole books; it costs the sum of the clubs' audits.
CREATE OR REPLACE FUNCTION mr_audit()
 RETURNS SETOF text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT a FROM clubs c CROSS JOIN LATERAL mr_audit_club(c.club_id) a
$function$;
