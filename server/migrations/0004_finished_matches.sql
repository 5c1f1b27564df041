-- Finished matches leave memory and are listed from here, newest first: when each finished,
-- and its line of the match list as JSON.
ALTER TABLE matches ADD COLUMN finished_ms BIGINT;
ALTER TABLE matches ADD COLUMN summary TEXT;
UPDATE matches SET finished_ms = created_ms WHERE finished = 1;
CREATE INDEX matches_finished ON matches (finished, finished_ms, id);
