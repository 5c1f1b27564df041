-- Glicko-2 ratings, one row per account and pool (a game, Pentago per rule set).
CREATE TABLE ratings (
    account TEXT NOT NULL,
    pool TEXT NOT NULL,
    rating DOUBLE PRECISION NOT NULL,
    deviation DOUBLE PRECISION NOT NULL,
    volatility DOUBLE PRECISION NOT NULL,
    rounds BIGINT NOT NULL,
    PRIMARY KEY (account, pool)
);
-- Each rated round, once per player: the rating after it. The key makes a round count once.
CREATE TABLE rating_history (
    match_id TEXT NOT NULL,
    account TEXT NOT NULL,
    pool TEXT NOT NULL,
    score DOUBLE PRECISION NOT NULL,
    rating DOUBLE PRECISION NOT NULL,
    deviation DOUBLE PRECISION NOT NULL,
    at_ms BIGINT NOT NULL,
    PRIMARY KEY (match_id, account)
);
CREATE INDEX rating_history_by_account ON rating_history (account, at_ms);
