-- Entries stay append-only, except that mr_club_purge removes a moved
-- club's from the pod it left.
CREATE OR REPLACE FUNCTION mr_entries_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('mr.purging_club', true) = OLD.club_id::text THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'ledger entries are append-only';
END $function$;

-- The trigger that runs it.
CREATE OR REPLACE TRIGGER ledger_entries_append_only BEFORE DELETE OR UPDATE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION mr_entries_append_only();
