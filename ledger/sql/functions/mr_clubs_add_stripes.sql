CREATE OR REPLACE FUNCTION mr_clubs_add_stripes()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO club_pool_stripes (club_id, stripe) SELECT NEW.club_id, s FROM generate_series(0, 15) s;
  RETURN NEW;
END $function$;

-- The trigger that runs it.
CREATE OR REPLACE TRIGGER clubs_add_stripes AFTER INSERT ON clubs FOR EACH ROW EXECUTE FUNCTION mr_clubs_add_stripes();
