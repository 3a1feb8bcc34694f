-- The pause, raised by every writer of a moving club's books.
CREATE OR REPLACE FUNCTION mr_refuse_moving(p_club_id bigint)
 RETURNS void
 LANGUAGE plpgsql
 STABLE
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM clubs WHERE club_id = p_club_id AND moving) THEN
    RAISE EXCEPTION 'club % is moving to another pod: its writes resume shortly', p_club_id
      USING ERRCODE = 'MR503';
  END IF;
END $function$;
