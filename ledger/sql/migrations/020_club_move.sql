-- Moving a club between pods (`mrctl club move`,
-- tools/mrctl/cmd_club_move.cpp; docs/architecture.md, Pods): the pause
-- mark and the events cursor's aliases. The pause, the export, the import
-- and the removal are functions (mr_refuse_moving, mr_club_export,
-- mr_club_import, mr_club_purge).
--
-- The events cursor (mr_events) is (xid, event_no) of the pod that wrote
-- the event. Moved events take the import's xid and new numbers in the
-- source's (xid, event_no) order, so they sort before anything the club
-- writes in the target later; event_cursor_aliases maps each cursor the
-- source handed out for them (the whole cursor text) to the moved event,
-- and mr_events decodes an alias before a cursor's digits. Aliases move
-- with the club, so a cursor stays good across any number of moves.

ALTER TABLE clubs ADD COLUMN moving boolean NOT NULL DEFAULT false;

CREATE TABLE event_cursor_aliases (
  club_id  bigint NOT NULL REFERENCES clubs,
  cursor   text NOT NULL,
  event_no bigint NOT NULL REFERENCES events ON DELETE CASCADE,
  PRIMARY KEY (club_id, cursor)
);
CREATE INDEX event_cursor_aliases_event ON event_cursor_aliases (event_no);
INSERT INTO api_access (object, privilege) VALUES ('event_cursor_aliases', 'select');
