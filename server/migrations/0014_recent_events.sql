-- SQLite's writer appends each commit's events here, a table without an index, so that a
-- commit writes a page or two rather than a leaf of the events' key for each of its matches;
-- the events move into `events` in bulk, in the key's order (docs/performance.md, "The
-- events' index"). The writer refuses an event numbered twice itself. PostgreSQL keeps
-- writing `events` directly and leaves this table empty.
CREATE TABLE events_recent (
    match_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    at_ms BIGINT NOT NULL,
    frame TEXT NOT NULL
);
