-- Accounts that log in: a password kept only as its Argon2id hash (none for accounts the
-- organizer made, which use their token), and a status (active, pending approval, disabled).
ALTER TABLE accounts ADD COLUMN password_hash TEXT;
ALTER TABLE accounts ADD COLUMN status TEXT NOT NULL DEFAULT 'active';
-- Sessions of accounts that logged in, each kept only as the SHA-256 digest of its token.
CREATE TABLE sessions (
    digest TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    created_ms BIGINT NOT NULL
);
CREATE INDEX sessions_by_account ON sessions (account);
