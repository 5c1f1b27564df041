-- A tournament's changes, in order, as its commands decided them (a pairing as its round):
-- appended before anyone is told. `tournaments.state` is a snapshot that includes the first
-- `changes_applied` of them (a field of the state); a restart replays the rest.
CREATE TABLE tournament_changes (
    tournament TEXT NOT NULL,
    seq BIGINT NOT NULL,
    change TEXT NOT NULL,
    PRIMARY KEY (tournament, seq)
);
