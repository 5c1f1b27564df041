-- Each match's chat: its messages, numbered from 1 in each of its two channels (the players'
-- and the spectators'), and the arbiter's settings.
CREATE TABLE chat_messages (
    match_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    n BIGINT NOT NULL,
    author TEXT NOT NULL,
    role TEXT NOT NULL,
    -- The account that wrote it, for the player's own data; none for a guest's seat.
    account TEXT,
    text TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    PRIMARY KEY (match_id, channel, n)
);
CREATE INDEX chat_messages_by_account ON chat_messages (account, at_ms);
CREATE TABLE chat_settings (
    match_id TEXT PRIMARY KEY,
    enabled BIGINT NOT NULL,
    -- JSON: the muted seats and accounts.
    mutes TEXT NOT NULL
);
