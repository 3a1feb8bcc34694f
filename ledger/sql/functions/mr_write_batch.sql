CREATE OR REPLACE FUNCTION mr_write_batch(p_batch jsonb)
 RETURNS SETOF jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
  PERFORM mr_refuse_moving(c) FROM (SELECT DISTINCT (b.v->>1)::bigint AS c FROM jsonb_array_elements(p_batch) b(v)) x;
  RETURN QUERY SELECT * FROM mr_write_batch_unpaused(p_batch);
END $function$;
