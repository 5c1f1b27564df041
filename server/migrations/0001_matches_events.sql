-- Matches and their events; the same text runs on SQLite and PostgreSQL.
CREATE TABLE matches (
    id TEXT PRIMARY KEY,
    created_ms BIGINT NOT NULL,
    -- Settings, players and tokens, as JSON.
    spec TEXT NOT NULL,
    -- 1 once the round is over; live matches are rebuilt at start.
    finished BIGINT NOT NULL DEFAULT 0
);

CREATE INDEX matches_live ON matches (finished, created_ms);

CREATE TABLE events (
    match_id TEXT NOT NULL REFERENCES matches (id),
    seq BIGINT NOT NULL,
    -- Wall-clock milliseconds when the event was accepted.
    at_ms BIGINT NOT NULL,
    -- The event frame exactly as it was sent to clients (JSON).
    frame TEXT NOT NULL,
    PRIMARY KEY (match_id, seq)
);

CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
