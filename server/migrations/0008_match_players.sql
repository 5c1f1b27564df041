-- The accounts seated in each match, for a player's list of matches (newest first).
CREATE TABLE match_players (
    account TEXT NOT NULL,
    match_id TEXT NOT NULL,
    seat TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (account, match_id)
);
CREATE INDEX match_players_by_time ON match_players (account, created_ms, match_id);
