-- Which node of a cluster owns each room, and with which lease: a node writes a room's events
-- only while the epoch here is its own (the fence that keeps a room to one owner).
CREATE TABLE room_leases (
    match_id TEXT PRIMARY KEY,
    node TEXT NOT NULL,
    epoch BIGINT NOT NULL
);
