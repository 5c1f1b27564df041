-- Player and bot accounts: seated in matches by name, told of them through their token.
CREATE TABLE accounts (
    name TEXT PRIMARY KEY,
    -- player or bot
    kind TEXT NOT NULL,
    token TEXT NOT NULL,
    created_ms BIGINT NOT NULL
);
