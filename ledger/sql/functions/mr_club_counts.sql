-- mrctl audit --club's summary: the club's members and their entries, as
-- mr_club_summary counts them for the club move (through the indexes, no
-- sequential scan): one place counts a club's rows.
CREATE OR REPLACE FUNCTION mr_club_counts(p_club_id bigint)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  SELECT jsonb_build_object('members', s -> 'members' -> 0, 'entries', s -> 'entries' -> 0)
  FROM mr_club_summary(p_club_id) s
$function$;
