-- An event's match is looked up as the writer inserts it (a match that does not exist gives
-- NULL, which `match_id` refuses), no longer checked by a foreign key: on PostgreSQL the key's
-- check locked the match's row for every event, and with it took a fifth of the database's
-- time for each commit (docs/performance.md). Matches are never deleted, so nothing else
-- needed the key. SQLite cannot drop a constraint in place, so the table is copied (one server
-- at a time holds the database's write lock); PostgreSQL drops it in place (the text beside
-- this one).
CREATE TABLE events_checked (
    match_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    -- Wall-clock milliseconds when the event was accepted.
    at_ms BIGINT NOT NULL,
    -- The event frame exactly as it was sent to clients (JSON).
    frame TEXT NOT NULL,
    PRIMARY KEY (match_id, seq)
);
INSERT INTO events_checked (match_id, seq, at_ms, frame)
    SELECT match_id, seq, at_ms, frame FROM events;
DROP TABLE events;
ALTER TABLE events_checked RENAME TO events;
