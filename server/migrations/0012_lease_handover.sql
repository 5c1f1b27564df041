-- The incarnation (one run of a node) that holds each lease, and the moment a node that stopped
-- cleanly handed the room over: the next holder charges the player on move up to then, or, when
-- the holder was lost, up to that incarnation's last sign of life.
ALTER TABLE room_leases ADD COLUMN incarnation TEXT;
ALTER TABLE room_leases ADD COLUMN handed_ms BIGINT;
