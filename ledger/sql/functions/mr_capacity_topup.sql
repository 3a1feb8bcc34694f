CREATE OR REPLACE FUNCTION mr_capacity_topup(p_ref text, p_minor bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_club bigint;
BEGIN
  PERFORM mr_refuse_moving_ref(p_ref);
  IF p_minor <= 0 THEN RAISE EXCEPTION 'minor units must be positive'; END IF;
  UPDATE clubs SET cash_capacity_minor = cash_capacity_minor + p_minor, updated_at = now()
  WHERE partner_ref = p_ref RETURNING club_id INTO v_club;
  IF v_club IS NULL THEN RAISE EXCEPTION 'no club %', p_ref; END IF;
  RETURN mr_club_json(v_club);
END $function$;
