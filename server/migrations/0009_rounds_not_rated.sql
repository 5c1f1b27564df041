-- Rated matches whose round ended with nothing played (a no-show, a forfeit): rated nobody,
-- and noted here so that a start looks at each of them once.
CREATE TABLE rounds_not_rated (
    match_id TEXT PRIMARY KEY
);
