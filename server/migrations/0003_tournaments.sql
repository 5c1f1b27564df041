-- Swiss tournaments: settings, players, pairings and results as one JSON document, rewritten
-- (before anyone is told) at every change. Their matches live in `matches`.
CREATE TABLE tournaments (
    id TEXT PRIMARY KEY,
    created_ms BIGINT NOT NULL,
    state TEXT NOT NULL
);
