-- PostgreSQL's text of schema 13 (see 0013_events_key_checked_by_the_writer.sql): the key is
-- dropped in place. Copying the table instead, as SQLite must, would lose the events that the
-- nodes of a cluster still on the previous version commit during the copy.
ALTER TABLE events DROP CONSTRAINT IF EXISTS events_match_id_fkey;
