-- The events API: the club's events oldest first, after a cursor.
--
-- Ordered by (xid, event_no). A page shows only events whose transaction is
-- older than the reading snapshot's xmin: every such transaction has ended,
-- so no event can later appear below a cursor already handed out, and every
-- transaction still running has an xid at or above xmin, so its events come
-- after. A plain event_no cursor would skip an event whose transaction drew
-- its number first and committed after a later number was listed.
--
-- The cursor: cur_ + 16 hex digits each of the xid, the event number and
-- the event's creation time in ms (refuses cursors past the 30 days kept).
CREATE OR REPLACE FUNCTION mr_event_cursor(p_xid xid8, p_no bigint, p_created timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT 'cur_' || lpad(to_hex(p_xid::text::bigint), 16, '0') || lpad(to_hex(p_no), 16, '0')
         || lpad(to_hex((extract(epoch FROM p_created) * 1000)::bigint), 16, '0')
$function$;
