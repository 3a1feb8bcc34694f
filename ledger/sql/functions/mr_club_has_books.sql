CREATE OR REPLACE FUNCTION mr_club_has_books(p_club_id bigint)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
  SELECT EXISTS (SELECT 1 FROM members WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM idempotency_records WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM events WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM webhook_endpoints WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM redemptions WHERE club_id = p_club_id)
      OR EXISTS (SELECT 1 FROM event_cursor_aliases WHERE club_id = p_club_id)
$function$;
