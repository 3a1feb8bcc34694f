-- GET /api/v1/redemptions: the club's redemptions newest first, strictly
-- older than p_before, paged as histories (mr_page: nextBefore null when no
-- older one exists), each as GET /api/v1/redemptions/{id} shows it. Filters
-- (NULL: none): p_request (requestId: at most one), p_member
-- (externalMemberId; an unknown member matches nothing), p_status. Each
-- branch reads at most limit + 1 rows from its index below the cursor, so
-- a page costs the same however many redemptions the club has: a requestId
-- by UNIQUE (club_id, request_id), a member's by redemptions_member_created
-- (a status beside it filters those), a status by
-- redemptions_club_status_created, the rest by redemptions_club_created.
CREATE OR REPLACE FUNCTION mr_redemptions(p_club_id bigint, p_request text, p_member text, p_status text, p_limit integer, p_before bigint, p_request_id text)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
  v_key bigint := mr_cursor_key(p_before);
  v_member bigint;
  v_ids text[];
  v_ms bigint[];
BEGIN
  IF p_member IS NOT NULL THEN
    SELECT member_id INTO v_member FROM members WHERE club_id = p_club_id AND external_id = p_member;
  END IF;
  IF p_request IS NOT NULL THEN
    SELECT array_agg(redemption_id), array_agg(created_ms) INTO v_ids, v_ms
    FROM redemptions
    WHERE club_id = p_club_id AND request_id = p_request AND created_ms < v_key
      AND (p_status IS NULL OR status = p_status) AND (p_member IS NULL OR member_id = v_member);
  ELSIF p_member IS NOT NULL THEN
    SELECT array_agg(redemption_id ORDER BY created_ms DESC), array_agg(created_ms ORDER BY created_ms DESC)
      INTO v_ids, v_ms
    FROM (SELECT redemption_id, created_ms FROM redemptions
          WHERE member_id = v_member AND created_ms < v_key AND (p_status IS NULL OR status = p_status)
          ORDER BY created_ms DESC LIMIT p_limit + 1) page;
  ELSIF p_status IS NOT NULL THEN
    SELECT array_agg(redemption_id ORDER BY created_ms DESC), array_agg(created_ms ORDER BY created_ms DESC)
      INTO v_ids, v_ms
    FROM (SELECT redemption_id, created_ms FROM redemptions
          WHERE club_id = p_club_id AND status = p_status AND created_ms < v_key
          ORDER BY created_ms DESC LIMIT p_limit + 1) page;
  ELSE
    SELECT array_agg(redemption_id ORDER BY created_ms DESC), array_agg(created_ms ORDER BY created_ms DESC)
      INTO v_ids, v_ms
    FROM (SELECT redemption_id, created_ms FROM redemptions
          WHERE club_id = p_club_id AND created_ms < v_key
          ORDER BY created_ms DESC LIMIT p_limit + 1) page;
  END IF;
  RETURN mr_page(coalesce((SELECT jsonb_agg(mr_redemption_json(u.id) ORDER BY u.n)
                           FROM unnest(v_ids) WITH ORDINALITY u (id, n)), '[]'::jsonb),
                 coalesce(v_ms, '{}'::bigint[]), p_limit, p_request_id);
END $function$;
