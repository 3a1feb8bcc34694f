-- GET /api/v1/events. A cursor handed out by the pod the club came from is
-- read as the position of the moved event it names, so a partner's paging
-- survives a club move.
CREATE OR REPLACE FUNCTION mr_events(p_club_id bigint, p_environment text, p_after text, p_limit integer, p_types text[], p_request_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  v_xid xid8 := '0';
  v_no bigint := 0;
  v_page jsonb;
  v_next text;
BEGIN
  IF p_after IS NOT NULL THEN
    IF p_after !~ '^cur_[0-9a-f]{48}$' OR substr(p_after, 5, 1) > '7' THEN
      RETURN mr_invalid(p_request_id, 'Invalid cursor.', 'after', 'must be a nextAfter value of this API');
    END IF;
    IF mr_hex_bigint(substr(p_after, 37, 16)) < mr_now_ms() - 30 * 86400000::bigint THEN
      RETURN mr_invalid(p_request_id, 'The cursor is older than the 30 days events are kept.', 'after',
                        'is older than 30 days; page again without after');
    END IF;
    SELECT e.xid, e.event_no INTO v_xid, v_no
    FROM event_cursor_aliases a JOIN events e USING (event_no)
    WHERE a.club_id = p_club_id AND a.cursor = p_after;
    IF NOT FOUND THEN
      v_xid := mr_hex_bigint(substr(p_after, 5, 16))::text::xid8;
      v_no := mr_hex_bigint(substr(p_after, 21, 16));
    END IF;
  END IF;
  SELECT coalesce(jsonb_agg(jsonb_build_object(
           'id', e.event_id, 'type', e.type, 'createdAt', mr_ts_text(e.created_at),
           'environment', p_environment, 'data', e.data) ORDER BY e.xid, e.event_no), '[]'::jsonb),
         (array_agg(mr_event_cursor(e.xid, e.event_no, e.created_at) ORDER BY e.xid DESC, e.event_no DESC))[1]
  INTO v_page, v_next
  FROM (SELECT * FROM events e
        WHERE e.club_id = p_club_id AND (e.xid, e.event_no) > (v_xid, v_no)
          AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
          AND (p_types IS NULL OR e.type = ANY (p_types))
        ORDER BY e.xid, e.event_no LIMIT p_limit) e;
  RETURN mr_ok('ok', p_request_id, jsonb_build_object('entries', v_page, 'nextAfter', coalesce(v_next, p_after)));
END $function$;
