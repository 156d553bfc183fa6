-- The complete dead-letter record: what a person needs once the attempts have stopped.

-- Every attempt the write made for the parked item (time, class, status, delay chosen before
-- the next attempt, masked message), copied from its key record when parked, so the record
-- keeps it after the key record is purged. A later park of the same open item appends.
ALTER TABLE :SCHEMA.dead_letters
	ADD COLUMN attempt_history jsonb NOT NULL DEFAULT '[]';
