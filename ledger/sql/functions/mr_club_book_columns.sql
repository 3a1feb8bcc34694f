-- The clubs columns a pod keeps for itself (the rest is the catalogue's
-- routing): set from the source's row, or reset when the books leave.
CREATE OR REPLACE FUNCTION mr_club_book_columns()
 RETURNS text[]
 LANGUAGE sql
 STABLE
AS $function$
  SELECT array_agg(quote_ident(attname::text) ORDER BY attnum) FROM pg_attribute
  WHERE attrelid = 'clubs'::regclass AND attnum > 0 AND NOT attisdropped
    AND attname NOT IN ('club_id', 'partner_ref', 'pod', 'moving', 'created_at')
$function$;
